--[[
  An event sent to a correlation key: kept until it expires (for waits still to come) and answered
  with the waits open on the key, which the caller delivers it to, each on its run's tag
  (deliver-run-3.lua). Waits past their end and events past their expiry go first.
  KEYS[1] the key's waiters (zset: `<run id> <wait id>` → the wait's end, ms, or +inf)
  KEYS[2] the key's events (zset: event JSON → expiry ms)
  ARGV: 1 event JSON · 2 now (ms) · 3 the event's expiry (ms; '' keeps nothing)
  → the members of the open waits
]]
--@include ./wait-functions.lua

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[2])
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  keep(KEYS[2], tonumber(ARGV[3]) - tonumber(ARGV[2]))
end
return redis.call('ZRANGE', KEYS[1], 0, -1)
