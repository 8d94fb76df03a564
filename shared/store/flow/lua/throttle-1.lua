--[[
  A run's start time under a throttle (FlowGates.throttle), on Redis's clock: at most `limit` starts in
  any `periodMs`. The key's members are the runs whose starts fall in the last period or later.
  KEYS[1] the throttle key (Keys.flowKey), a zset: run id → its start time (ms)
  ARGV: limit, periodMs, the run's id
  → the run's delay (ms; 0: start now). The same run asking again gets the start it was given.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, period, run_id = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - period))
local given = redis.call('ZSCORE', KEYS[1], run_id)
if given then return math.max(0, tonumber(given) - now) end
local start = now
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  -- Starts only grow, so the limit-th latest decides: this one goes a period after it.
  local kth = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  start = math.max(now, tonumber(kth[2]) + period)
end
redis.call('ZADD', KEYS[1], start, run_id)
redis.call('PEXPIREAT', KEYS[1], start + period)
return start - now
