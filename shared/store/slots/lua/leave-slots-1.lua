--[[
  A run leaves a key's members (KeyedSlots): it finished, or was refused. A slot it held goes to the
  first run waiting, which holds it from now on (should the hand-on to the intake be lost, the run finds
  it held when it is looked at again).

  Input:
    KEYS[1] the key's members (a sorted set: holders score their place minus HELD, waiting runs their time)

    ARGV[1] run id
    ARGV[2] limit (slots)

  Output:
    the run that holds a slot now and did not before, else false (also when the run had left already, so
    of two callers leaving the same run only one hands its slot on)
]]
local HELD = 1e15
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return false end
redis.call('ZREM', KEYS[1], ARGV[1])
if tonumber(score) >= 0 then return false end
if redis.call('ZCOUNT', KEYS[1], '-inf', '(0') >= tonumber(ARGV[2]) then return false end
local first = redis.call('ZRANGEBYSCORE', KEYS[1], 0, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
if not first[1] then return false end
redis.call('ZADD', KEYS[1], string.format('%.0f', tonumber(first[2]) - HELD), first[1])
return first[1]
