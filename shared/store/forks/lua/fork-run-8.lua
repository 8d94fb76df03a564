--[[
  Creates a fork in one script over its own keys: meta, state, history, inherited step log,
  its parallel siblings' writes and the recording's boundaries it inherits, and a `run-fork` event. The
  original is not touched (it may live on another shard: it was read before, in a snapshot of its own).
  KEYS: the fork's run keys (Keys.runAll)
  ARGV: 1 events maxlen · 2 run-fork event data JSON · then six sections, each a count c and c values:
    meta field/value pairs · state field/value pairs · messages · step records · writes task/JSON pairs
    · recording field/value pairs
  → 1 created, 0 the id is taken. Every byte it stores is charged to the tenant's ledger the meta's
  `ledger` field names.

  KEYS[1..8] the fork's run keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ../../lua/run-functions.lua

if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local at = 3
local function section(cmd, key)
  local count = tonumber(ARGV[at])
  if count > 0 then push_from(cmd, key, ARGV, at + 1, count) end
  at = at + 1 + count
end
section('HSET', KEYS[1])
section('HSET', KEYS[2])
section('RPUSH', KEYS[3])
section('RPUSH', KEYS[4])
section('HSET', KEYS[6])
section('HSET', KEYS[8])
-- The fork keeps its own copy of all of it: charged in full to its tenant's ledger (its meta's `ledger`).
charge(KEYS, bytes_of(ARGV, 3, #ARGV - 2))
run_event(KEYS, ARGV[1], 'run-fork', ARGV[2])
return 1
