--[[
  A note kept on a run's meta once (HSETNX) while the run exists: a late delivery (a paused worker's) after
  the run expired would otherwise make a meta of that one field again, with no TTL, kept for ever.
  KEYS: 1 the run's meta · ARGV: 1 field · 2 value · 3 updatedAt (ms) to set beside it ('' none)
  → 1 noted | 0 the field was there already | -1 the run is gone (nothing written)

  KEYS[1] the run's meta
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local noted = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'updatedAt', ARGV[3]) end
return noted
