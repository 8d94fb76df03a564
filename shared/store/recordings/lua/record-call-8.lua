--[[
  KEYS: the run's keys (Keys.runAll) · ARGV: recordCallArgs → record_call's verdict.

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./record-call-function.lua

return record_call(KEYS, ARGV, 1)
