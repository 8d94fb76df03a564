--[[
  A provider batch was created (or found again) for a flush: the flush names it, unless it already names
  another one. Two workers can both get here only when a collector's lease lapsed during its create (a
  paused process, a partition): the first to write wins, the other's provider batch is a second one.
  KEYS: 1 the flush's hash
  ARGV: 1 the provider's batch id · 2 now (ms, Redis's time as the collector reads it)
  → 1 the flush names this provider batch · 0 it names another (this one is not to be used)

  KEYS[1] the flush's hash
]]
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'uploaded' then
  redis.call('HSET', KEYS[1], 'state', 'created', 'batchId', ARGV[1], 'updatedAt', ARGV[2])
  return 1
end
if redis.call('HGET', KEYS[1], 'batchId') == ARGV[1] then return 1 end
return 0
