--[[
  BEGIN on its own (a job fetched without its cursor). ARGV: 1 superstep · 2 task · 3 now · 4 events maxlen · 5 step-start data JSON · 6 cached superstep ('' = none)

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua
--@include ./start-task.lua
--@include ./begin-step-function.lua

return begin_step(KEYS, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
