--[[
  Fragment, included with --@include: every function of the run store's step scripts (run-functions,
  start_task, begin_step, commit_step), for the scripts that compose them with BullMQ's
  (step-transition, step-take). No KEYS or ARGV of its own.
]]
--@include ./run-functions.lua
--@include ./start-task.lua
--@include ./begin-step-function.lua
--@include ./commit-step-function.lua
