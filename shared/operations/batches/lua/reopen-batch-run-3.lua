--[[
  A finished run of the batch was retried (in place, same id): it is in flight again, no longer counted
  as finished.

  Input:
    KEYS[1] meta
    KEYS[2] inflight
    KEYS[3] done

    ARGV[1] run id

  Output:
    1, or 0 when the batch is gone
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local was = redis.call('HGET', KEYS[3], ARGV[1])
if was then
  redis.call('HINCRBY', KEYS[1], 'done_' .. was, -1)
  redis.call('HDEL', KEYS[3], ARGV[1])
end
redis.call('SADD', KEYS[2], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
