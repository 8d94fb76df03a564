--[[
  ARGV: field/value pairs of the meta hash. Creates the run unless it exists, its bytes charged to the
  ledger its `ledger` field names. → 1 created, or the existing run's meta pairs

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./storage-functions.lua

if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
redis.call('HSET', KEYS[1], unpack(ARGV))
charge(KEYS, bytes_of(ARGV, 1, #ARGV))
return 1
