--[[
  A run of the batch finished: its usage into the batch's totals (add_run_usage, once per run), then free
  its slot; the batch is completed once every item was dispatched and none is in flight. While it is still running, the freed slot's next item is claimed in the same step
  (as claim-batch-item): the next question starts one round trip after the last one ended, not four.
  A finished run ends the batch's warm-up (its model calls were answered, whatever else told the batch).
  The run's status is counted in the meta (`done_<status>`) once per finish: `done` remembers what each
  run was counted as, so a retried run that finishes again moves from its old count to its new one.

  Input:
    KEYS[1] meta
    KEYS[2] inflight
    KEYS[3] items
    KEYS[4] done
    KEYS[5] usage

    ARGV[1] run id
    ARGV[2] now
    ARGV[3] run id prefix
    ARGV[4] the run's status
    ARGV[5..9] the run's usage: input tokens, cached input tokens, output tokens, cost USD, uncached cost USD

  Output:
    {batch status, false, the run's model calls, {tenant, graph, mode, providerBatch}} ('missing' alone: the
    batch expired; nothing is written), or {'running', claim_next's reply, …} the same
]]
--@include ./claim-next.lua
--@include ./run-usage.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local calls = add_run_usage(KEYS[1], KEYS[5], ARGV[1], {ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]})
local batch = redis.call('HMGET', KEYS[1], 'tenant', 'graph', 'mode', 'providerBatch')
redis.call('SREM', KEYS[2], ARGV[1])
local was = redis.call('HGET', KEYS[4], ARGV[1])
if was ~= ARGV[4] then
  if was then redis.call('HINCRBY', KEYS[1], 'done_' .. was, -1) end
  redis.call('HINCRBY', KEYS[1], 'done_' .. ARGV[4], 1)
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
end
redis.call('HDEL', KEYS[1], 'warmup')
local m = redis.call('HMGET', KEYS[1], 'status', 'next', 'total')
if m[1] == 'running' and tonumber(m[2]) >= tonumber(m[3]) and redis.call('SCARD', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[1], 'status', 'completed', 'finishedAt', ARGV[2], 'updatedAt', ARGV[2])
  return {'completed', false, calls, batch}
end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[2])
if m[1] ~= 'running' then return {m[1] or 'missing', false, calls, batch} end
return {'running', claim_next(KEYS[1], KEYS[2], KEYS[3], ARGV[3], ARGV[2]), calls, batch}
