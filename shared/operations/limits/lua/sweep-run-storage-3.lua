--[[
  Take the charges of runs whose keys have left Redis (expired with their run, purged) out of a tenant's
  ledger of run bytes on one shard (Keys.tenantRunStorage), and answer what it counts now.

  Input:
    KEYS[1] total
    KEYS[2] charges
    KEYS[3] expiry

    ARGV[1] now (ms)

  Output:
    the tenant's bytes on this shard
]]
for _, run in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, 500)) do
  redis.call('DECRBY', KEYS[1], tonumber(redis.call('HGET', KEYS[2], run) or '0'))
  redis.call('HDEL', KEYS[2], run)
  redis.call('ZREM', KEYS[3], run)
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
