--[[
  Hold a call's estimate against a tenant's budgets: usage + live reservations + this estimate must fit
  every limit; the estimate is then held as a reservation, so concurrent callers see each other's calls
  before any of them has been counted.

  Input:
    KEYS[1] limits
    KEYS[2] day usage
    KEYS[3] month usage
    KEYS[4] reservations

    ARGV[1] member `<callId>|<tokens>|<costMicros>` ('' = no estimate yet)
    ARGV[2] tokens
    ARGV[3] cost (micro-dollars)
    ARGV[4] now (ms)
    ARGV[5] reservation ttl (ms)
    ARGV[6..9] default tokensPerDay, tokensPerMonth, costMicrosPerDay, costMicrosPerMonth ('' = none)

  Output:
    {1} reserved (or nothing to hold: the tenant has no limits) | {2} the tenant has limits, ask again
    with the estimate | {0, field, limit, usedAndReserved} refused
]]
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[4])
if ARGV[1] ~= '' and redis.call('ZSCORE', KEYS[4], ARGV[1]) then
  redis.call('ZADD', KEYS[4], tonumber(ARGV[4]) + tonumber(ARGV[5]), ARGV[1])
  return {1}
end
local limits = {}
local stored = redis.call('HGETALL', KEYS[1])
if #stored > 0 then
  for i = 1, #stored, 2 do limits[stored[i]] = tonumber(stored[i + 1]) end
else
  local names = {'tokensPerDay', 'tokensPerMonth', 'costMicrosPerDay', 'costMicrosPerMonth'}
  for i, name in ipairs(names) do if ARGV[5 + i] ~= '' then limits[name] = tonumber(ARGV[5 + i]) end end
end
if next(limits) == nil then return {1} end
if ARGV[1] == '' then return {2} end
local reservedTokens, reservedCost = 0, 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  local t, c = string.match(member, '|(%d+)|(%d+)$')
  reservedTokens = reservedTokens + tonumber(t)
  reservedCost = reservedCost + tonumber(c)
end
local checks = {
  {'tokensPerDay', KEYS[2], 'tokens', reservedTokens, tonumber(ARGV[2])},
  {'tokensPerMonth', KEYS[3], 'tokens', reservedTokens, tonumber(ARGV[2])},
  {'costMicrosPerDay', KEYS[2], 'costMicros', reservedCost, tonumber(ARGV[3])},
  {'costMicrosPerMonth', KEYS[3], 'costMicros', reservedCost, tonumber(ARGV[3])},
}
for _, check in ipairs(checks) do
  local limit = limits[check[1]]
  if limit then
    local used = tonumber(redis.call('HGET', check[2], check[3]) or '0') + check[4]
    if used + check[5] > limit then return {0, check[1], tostring(limit), tostring(used)} end
  end
end
redis.call('ZADD', KEYS[4], tonumber(ARGV[4]) + tonumber(ARGV[5]), ARGV[1])
return {1}
