--[[
  A run leaves its conversation's turns.

  Input:
    KEYS[1] the conversation's turns

    ARGV[1] run id

  Output:
    the turn that is first now, when the run was first and another waits; false otherwise (also when
    the run had left already, so of two callers leaving the same turn only one hands it on)
]]
local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return false end
if first ~= ARGV[1] then return false end
return redis.call('ZRANGE', KEYS[1], 0, 0)[1] or false
