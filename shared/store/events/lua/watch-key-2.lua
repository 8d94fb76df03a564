--[[
  A step waiting on a correlation key enters its index, and reads the events the key was sent that have
  not expired (oldest first): the caller offers each to the wait (deliver-run-3.lua, on the run's tag).
  Both in one script, as a send is (send-key-2.lua): a send either sees this wait or is seen by it.
  KEYS[1] the key's waiters (zset: `<run id> <wait id>` → the wait's end, ms, or +inf)
  KEYS[2] the key's events (zset: event JSON → expiry ms)
  ARGV: 1 member · 2 the wait's end (ms or '+inf') · 3 now (ms) · 4 how long to keep the index at least (ms)
  → the events' JSON
]]
--@include ./wait-functions.lua

redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
keep(KEYS[1], tonumber(ARGV[4]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])
return redis.call('ZRANGE', KEYS[2], 0, -1)
