--[[
  A planned batch's model call was answered (its cost) or failed (cost 0): its hold leaves `inflightUsd`
  and its cost goes into `spentUsd`, once per call whoever settles it first.

  Input:
    KEYS[1] meta
    KEYS[2] holds

    ARGV[1] call id (<run id>|<step id>|<key>)
    ARGV[2] the call's cost, USD

  Output:
    1 settled now, 0 nothing held for it
]]
local held = redis.call('HGET', KEYS[2], ARGV[1])
if not held then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HINCRBYFLOAT', KEYS[1], 'inflightUsd', string.format('%.12f', -tonumber(held)))
local cost = tonumber(ARGV[2]) or 0
if cost > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'spentUsd', string.format('%.12f', cost)) end
return 1
