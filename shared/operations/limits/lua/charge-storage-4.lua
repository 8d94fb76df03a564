--[[
  Take charges whose bytes left Redis out of the total; then, unless the id is charged already, charge
  it its bytes if they fit the limit beside the tenant's run bytes (counted in the run ledgers of its
  shards, passed in). With ARGV[6] '1' only checks that they fit and charges nothing (a run: its scripts
  charge what they store). STORAGE_LIMIT_FIELD: the limits hash's field (storage-budget.ts).

  Input:
    KEYS[1] total
    KEYS[2] charges
    KEYS[3] expiry
    KEYS[4] the tenant's limits hash

    ARGV[1] id
    ARGV[2] bytes
    ARGV[3] now (ms)
    ARGV[4] default limit (AGENTQ_TENANT_MAX_BYTES; 0 = none)
    ARGV[5] the tenant's bytes in its run ledgers
    ARGV[6] '1' check only, '0' charge

  Output:
    {2, total, limit} held already (and live again) | {1, total, limit} charged (or fits) | {0, total, limit}
    refused; total counts the run ledgers' bytes too
]]
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[3], 'LIMIT', 0, 500)) do
  redis.call('DECRBY', KEYS[1], tonumber(redis.call('HGET', KEYS[2], id) or '0'))
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
local total = tonumber(redis.call('GET', KEYS[1]) or '0') + tonumber(ARGV[5])
local own = redis.call('HGET', KEYS[4], '{{STORAGE_LIMIT_FIELD}}')
local limit = tonumber(own or ARGV[4])
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('ZADD', KEYS[3], '+inf', ARGV[1])
  return {2, total, limit}
end
local bytes = tonumber(ARGV[2])
if (own or limit > 0) and total + bytes > limit then return {0, total, limit} end
if ARGV[6] == '1' then return {1, total + bytes, limit} end
redis.call('INCRBY', KEYS[1], bytes)
redis.call('HSET', KEYS[2], ARGV[1], bytes)
redis.call('ZADD', KEYS[3], '+inf', ARGV[1])
return {1, total + bytes, limit}
