--[[
  A run leaves a key's members (KeyedSlots): it finished, or was refused.

  Input:
    KEYS[1] the key's members (a sorted set)

    ARGV[1] run id
    ARGV[2] limit (slots)

  Output:
    the member that holds a slot now and did not before — when the run held one and another waited —
    else false (also when the run had left already, so of two callers leaving the same run only one hands
    its slot on)
]]
local limit = tonumber(ARGV[2])
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then return false end
redis.call('ZREM', KEYS[1], ARGV[1])
if rank >= limit then return false end
return redis.call('ZRANGE', KEYS[1], limit - 1, limit - 1)[1] or false
