--[[
  A cancellation request. A run with no step in flight (queued, waiting) is cancelled at once; a
  running one becomes 'cancelling' and the worker ends it at the step boundary.
  ARGV: 1 now · 2 events maxlen · 3 retention s · 4 error JSON · 5 run-end data JSON
  → { the status after the request, or 'missing'; 1 when this request changed it, else 0 }

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua

local status = redis.call('HGET', KEYS[1], 'status')
if not status then return { 'missing', 0 } end
-- Said apart from a change, so a bulk cancel counts only the runs it cancelled itself.
if terminal(status) or status == 'cancelling' then return { status, 0 } end
if status == 'running' then
  redis.call('HSET', KEYS[1], 'status', 'cancelling', 'updatedAt', ARGV[1])
  return { 'cancelling', 1 }
end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'error', ARGV[4], 'finishedAt', ARGV[1], 'updatedAt', ARGV[1])
charge(KEYS, #ARGV[4])
event(ARGV[2], 'run-end', ARGV[5])
expire_all(ARGV[3])
return { 'cancelled', 1 }
