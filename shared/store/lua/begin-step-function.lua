--[[
  Fragment, included with --@include: begin_step; STEP_FIELDS is STEP_META_FIELDS as Lua strings. No KEYS or ARGV of its own.

  Read the cursor before doing anything (docs/concepts/step-engine.md): what a step job of (superstep k, task) should
  do, and when it should run, mark the run running and emit step-start in the same script.
  cached: the superstep whose state the caller holds ('' = none); state is sent only when the cursor differs.
  → {'missing'} | {'skip', status} | {'stale', status} | {'admit', status, meta pairs}
    | {'written', status} | {'cancel', status} | {'run', status, STEP_META_FIELDS values as one JSON array
    (false: absent), state as one JSON object or nil (cached), memos JSON or nil}
  A cursor one past k means a committed step: engine v2 adds the next jobs in the commit's own script,
  so such a job is a stale duplicate (a lost job is the reconciler's business).
]]
local function begin_step(rk, k_arg, task, now, maxlen, start_data, cached, fresh)
  local m = redis.call('HMGET', rk[1], {{STEP_FIELDS}})
  local status = m[1]
  if not status then return {'missing'} end
  if terminal(status) or status == 'waiting' then return {'skip', status} end
  local current, k = tonumber(m[2]), tonumber(k_arg)
  -- Not taken in yet: the run's start job (superstep 0, task 0) takes it in, then runs its first task.
  if not m[3] and status == 'queued' and k == 0 and tostring(task) == '0' then return {'admit', status, redis.call('HGETALL', rk[1])} end
  if current ~= k or not m[3] then return {'stale', status} end
  -- Only a parallel superstep stores writes: its tasks JSON lists more than one object.
  if (tostring(task) ~= '0' or string.find(m[3], '},{', 1, true)) and redis.call('HEXISTS', rk[6], task) == 1 then return {'written', status} end
  if status == 'cancelling' then return {'cancel', status} end
  return start_task(rk, m, k_arg, task, now, maxlen, start_data, cached ~= '' and tonumber(cached) == current, fresh)
end
