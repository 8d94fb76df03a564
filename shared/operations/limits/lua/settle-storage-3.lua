--[[
  Add a charge's bytes and set when they expire.

  Input:
    KEYS[1] total
    KEYS[2] charges
    KEYS[3] expiry

    ARGV[1] id
    ARGV[2] bytes to add
    ARGV[3] expires at (ms)

  Output:
    1
]]
local bytes = tonumber(ARGV[2])
if bytes > 0 then
  redis.call('HINCRBY', KEYS[2], ARGV[1], bytes)
  redis.call('INCRBY', KEYS[1], bytes)
end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1]) end
return 1
