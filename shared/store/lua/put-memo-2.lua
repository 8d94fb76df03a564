--[[
  A step's memoised paid work saved (a worker without claims on paid work), unless the run has finished or
  is gone: a late save would make the memo hash again with no TTL, kept after the run expired.
  KEYS: 1 the run's memo hash · 2 its meta · ARGV: 1 step id · 2 the step's results JSON
  → 1 saved | 'ended' (nothing written)

  KEYS[1] the run's memo hash
  KEYS[2] the run's meta
]]
local status = redis.call('HGET', KEYS[2], 'status')
if not status or status == 'completed' or status == 'failed' or status == 'cancelled' then return 'ended' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
