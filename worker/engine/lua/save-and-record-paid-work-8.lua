--[[
  SAVE_PAID_WORK and the call's recording in one script, for a run that records `full`: one
  round trip where the save and RECORD_CALL were two, in the same order (the recording after the save).
  KEYS: the run's keys (Keys.runAll; 1 is the meta, 7 the memo hash) · ARGV: 1-4 as SAVE_PAID_WORK's · 5… recordCallArgs
  → record_call's verdict | 'ended' (the run finished or is gone: nothing saved, nothing recorded)

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ../../../shared/store/recordings/lua/record-call-function.lua
--@include ./save-paid-function.lua

-- What the save, the recording and the storage ledger read of the run, in one call.
local m = redis.call('HMGET', KEYS[1], 'status', 'record', 'recordMax', 'ledger')
if not save_paid(KEYS[1], KEYS[7], ARGV[1], ARGV[2], ARGV[3], ARGV[4], m[1] or false) then return 'ended' end
know_ledger(KEYS, m[4])
-- The call and its contents charged as one.
defer_charges()
local verdict = record_call(KEYS, ARGV, 5, m)
flush_charges()
return verdict
