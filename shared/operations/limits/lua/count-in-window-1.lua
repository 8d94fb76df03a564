--[[
  Count an event in its fixed window: API requests per key per minute (rate-limiter.ts), failed
  authentications per address per minute (the API's auth throttle).

  Input:
    KEYS[1] window counter

    ARGV[1] window length (ms)

  Output:
    events in this window, this one included
]]
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
