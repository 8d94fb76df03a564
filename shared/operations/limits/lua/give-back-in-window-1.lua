--[[
  Give back one event counted in its fixed window (count-in-window-1.lua): a run the admission refused
  or undid after the key's rate limit counted it (a schedule's tick that started nothing).

  Input:
    KEYS[1] window counter

    ARGV none

  Output:
    events left in this window (0 when the window is gone: nothing to give back)
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local count = redis.call('DECR', KEYS[1])
if count < 0 then
  redis.call('SET', KEYS[1], 0, 'KEEPTTL')
  return 0
end
return count
