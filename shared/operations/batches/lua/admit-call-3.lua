--[[
  A planned batch's model call is about to be sent: in which mode, and whether the budget still lets it.
  The call holds its estimated cost (`inflightUsd`) until its answer's cost replaces it (settle-call-2.lua);
  when what was spent plus what is in flight plus this call would pass the budget, the batch stops: the
  meta's `stopped` says when and what is left, and every later call is refused too. A call seen before
  (a retry, a parked step woken) keeps its one hold and is counted once.

  Input:
    KEYS[1] meta
    KEYS[2] holds
    KEYS[3] usage (per run: `n:<run id>` counts its calls)

    ARGV[1] call id (<run id>|<step id>|<key>)
    ARGV[2] the call's estimated cost, USD
    ARGV[3] now (ms)
    ARGV[4] the run id

  Output:
    {'send', mode, flex fallback} | {'stopped', stopped JSON} | {'closed', batch status}
]]
local m = redis.call('HMGET', KEYS[1], 'status', 'mode', 'stopped', 'autopilot', 'spentUsd', 'inflightUsd', 'total',
  'done_completed', 'done_failed', 'done_cancelled')
if m[1] ~= 'running' then return {'closed', m[1] or 'missing'} end
if m[3] then return {'stopped', m[3]} end
local mode = m[2] or 'live'
local autopilot = m[4] and cjson.decode(m[4]) or {}
local held = redis.call('HGET', KEYS[2], ARGV[1])
local fallback = autopilot.flexFallback or 'retry'
if held then return {'send', mode, fallback} end
local estimate = tonumber(ARGV[2]) or 0
local budget = tonumber(autopilot.budgetUsd)
local spent, inflight = tonumber(m[5] or '0'), tonumber(m[6] or '0')
if budget and spent + inflight + estimate > budget then
  local finished = tonumber(m[8] or '0') + tonumber(m[9] or '0') + tonumber(m[10] or '0')
  local stopped = cjson.encode({
    reason = 'budget',
    at = tonumber(ARGV[3]),
    left = { questions = tonumber(m[7]) - finished, budgetUsd = math.max(0, budget - spent) },
  })
  redis.call('HSET', KEYS[1], 'stopped', stopped, 'updatedAt', ARGV[3])
  return {'stopped', stopped}
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HINCRBYFLOAT', KEYS[1], 'inflightUsd', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'calls_' .. mode, 1)
redis.call('HINCRBY', KEYS[3], 'n:' .. ARGV[4], 1)
return {'send', mode, fallback}
