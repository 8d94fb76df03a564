--[[
  Replace a granted slot's estimated tokens by the tokens used, the entry moved to the time it settled.

  Input:
    KEYS[1] the log

    ARGV[1] member
    ARGV[2] actual tokens

  Output:
    1 replaced, 0 gone (left the window)
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
redis.call('ZREM', KEYS[1], ARGV[1])
local prefix = string.match(ARGV[1], '^(%d+:[^:]+):')
redis.call('ZADD', KEYS[1], math.max(tonumber(score), now), prefix .. ':' .. ARGV[2])
return 1
