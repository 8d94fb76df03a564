--[[
  Fixes the time a wait ends (a sleep's wake-up, a waitFor's timeout) at its first call: a later
  attempt of the step (a crash, a failover) reads the same time back and does not start over.
  KEYS[1] the run's waits hash
  ARGV: 1 wait id · 2 the end proposed now (ms) · 3 how long to keep the hash at least (ms)
  → the end, fixed (ms, as a string)
]]
--@include ./wait-functions.lua

redis.call('HSETNX', KEYS[1], 'u:' .. ARGV[1], ARGV[2])
keep(KEYS[1], tonumber(ARGV[3]))
return redis.call('HGET', KEYS[1], 'u:' .. ARGV[1])
