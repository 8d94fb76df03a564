--[[
  Commit on its own (a parallel superstep's advance has no job to finish). ARGV as COMMIT_FN's A.

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua
--@include ./commit-step-function.lua

return commit_step(KEYS, ARGV)
