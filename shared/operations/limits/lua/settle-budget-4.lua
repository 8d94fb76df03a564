--[[
  Count a call's tokens and cost in the day and month usage, once per call id.

  Input:
    KEYS[1] day usage
    KEYS[2] month usage
    KEYS[3] reservations
    KEYS[4] settled call ids

    ARGV[1] reservation member ('' = none)
    ARGV[2] call id
    ARGV[3] tokens
    ARGV[4] cost (micro-dollars)
    ARGV[5] graph
    ARGV[6] model
    ARGV[7] now (ms)
    ARGV[8] day ttl (s)
    ARGV[9] month ttl (s)
    ARGV[10] settled-id memory (ms)

  Output:
    1 counted | 0 this call id was counted already (a re-delivered step)
]]
if ARGV[1] ~= '' then redis.call('ZREM', KEYS[3], ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', tonumber(ARGV[7]) - tonumber(ARGV[10]))
if redis.call('ZADD', KEYS[4], 'NX', ARGV[7], ARGV[2]) == 0 then return 0 end
local tokens, cost = tonumber(ARGV[3]), tonumber(ARGV[4])
for _, key in ipairs({KEYS[1], KEYS[2]}) do
  redis.call('HINCRBY', key, 'tokens', tokens)
  redis.call('HINCRBY', key, 'costMicros', cost)
  redis.call('HINCRBY', key, 'calls', 1)
  redis.call('HINCRBY', key, 'tokens:graph:' .. ARGV[5], tokens)
  redis.call('HINCRBY', key, 'costMicros:graph:' .. ARGV[5], cost)
  redis.call('HINCRBY', key, 'tokens:model:' .. ARGV[6], tokens)
  redis.call('HINCRBY', key, 'costMicros:model:' .. ARGV[6], cost)
end
redis.call('EXPIRE', KEYS[1], ARGV[8])
redis.call('EXPIRE', KEYS[2], ARGV[9])
return 1
