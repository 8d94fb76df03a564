--[[
  Reserve a slot in a tenant's in-flight set.

  Input:
    KEYS[1] the tenant's in-flight set

    ARGV[1] run id
    ARGV[2] cap

  A slot is stamped with Redis's time (TIME), not the caller's: the sweep, in another process, judges its
  age by the same clock.

  Output:
    2 held already, 1 reserved now, 0 full
]]
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 2 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
local time = redis.call('TIME')
redis.call('ZADD', KEYS[1], tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000), ARGV[1])
return 1
