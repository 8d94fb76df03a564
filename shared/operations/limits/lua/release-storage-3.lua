--[[
  Release a charge.

  Input:
    KEYS[1] total
    KEYS[2] charges
    KEYS[3] expiry

    ARGV[1] id

  Output:
    the bytes released
]]
local bytes = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
redis.call('DECRBY', KEYS[1], bytes)
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return bytes
