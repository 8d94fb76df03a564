--[[
  Calls still pending get a verdict without going in any provider batch (the batch was cancelled, or
  the provider has no Batch API): each becomes ARGV[1]'s call state.
  KEYS: 1 calls · 2 pending · 3 bodies · ARGV: 1 call state JSON
  → the custom ids it settled

  KEYS[1..3] as listed above: calls, pending, bodies
]]
local ids = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, id in ipairs(ids) do
  redis.call('HSET', KEYS[1], id, ARGV[1])
  redis.call('HDEL', KEYS[3], id)
end
redis.call('DEL', KEYS[2])
return ids
