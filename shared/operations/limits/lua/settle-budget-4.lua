--[[
  Count calls' tokens and cost in the day and month usage, each once per call id: the calls of one tenant
  that settle at the same moment, in one script, their increments summed per field.

  Input:
    KEYS[1] day usage
    KEYS[2] month usage
    KEYS[3] reservations
    KEYS[4] settled call ids

    ARGV[1] now (ms)
    ARGV[2] day ttl (s)
    ARGV[3] month ttl (s)
    ARGV[4] settled-id memory (ms)
    ARGV[5 + 6i .. 10 + 6i] call i: reservation member ('' = none), call id, tokens, cost (micro-dollars),
      graph, model

  Output:
    per call, in order: 1 counted | 0 this call id was counted already (a re-delivered step)
]]
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[4]))
local counted, sums, fields = {}, {}, {}
local function add(field, by)
  if sums[field] == nil then
    sums[field] = 0
    fields[#fields + 1] = field
  end
  sums[field] = sums[field] + by
end
for i = 5, #ARGV, 6 do
  if ARGV[i] ~= '' then redis.call('ZREM', KEYS[3], ARGV[i]) end
  if redis.call('ZADD', KEYS[4], 'NX', ARGV[1], ARGV[i + 1]) == 0 then
    counted[#counted + 1] = 0
  else
    counted[#counted + 1] = 1
    local tokens, cost = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    add('tokens', tokens)
    add('costMicros', cost)
    add('calls', 1)
    add('tokens:graph:' .. ARGV[i + 4], tokens)
    add('costMicros:graph:' .. ARGV[i + 4], cost)
    add('tokens:model:' .. ARGV[i + 5], tokens)
    add('costMicros:model:' .. ARGV[i + 5], cost)
  end
end
if #fields > 0 then
  for _, key in ipairs({KEYS[1], KEYS[2]}) do
    for _, field in ipairs(fields) do redis.call('HINCRBY', key, field, string.format('%d', sums[field])) end
  end
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
return counted
