--[[
  Fragment, included with --@include: commit_step; CANCELLED_ERROR and CANCELLED_END are the cancelled error and run-end data as Lua long strings. No KEYS or ARGV of its own.

  Commit a step: state update, history append, step record, step-end event, cursor advance — atomically,
  fenced on the superstep. Modes:
   - 'single': the only task of its superstep; record and advance at once.
   - 'task':   one of several parallel tasks; store its write, record it; → {'stored', index, writesSoFar}
   - 'advance': after all tasks stored their writes, apply the merged update and advance.
  ARGV: 1 superstep · 2 task · 3 mode · 4 now · 5 events maxlen · 6 retention s · 7 step record JSON (without
    index) · 8 task write JSON · 9 total tasks · 10 outcome ('next'|'completed') · 11 next tasks JSON or output JSON
    · 12 step-end data JSON (without index) · 13 input tokens · 14 output tokens · 15 cost USD (the step's
    model usage, added to the run's) · 16 '1' when the step may have memos to drop (its BEGIN brought some
    or it saved some), else '0' · 17 n · n state field/value pairs · m · m messages · then the step's cached
    input tokens and its cost had none been cached ('0' none; both added to the run's)
  → {'fenced'} | {'missing'} | {'stored', index, count} | {'advanced', index}
    | {'completed'|'cancelled', index, tenant, webhook URL, batch id ('' none), output bytes, conversation id ('' none),
      graph, graph version, concurrency (JSON, '' none)[, a batch's run: inputTokens, cachedInputTokens, outputTokens,
      costUsd, uncachedCostUsd, createdAt, finishedAt ('' none)]}
]]
-- A run this commit finished: with what its finish hooks need (tenant, webhook URL, batch, output
-- length, conversation, graph and version for the metrics, concurrency key), so the worker need not read them back
-- before it hands the batch's slot on; a batch's run with its usage too, which the batch's totals take in
-- the script that frees its slot (RUN_FIELDS of shared/operations/batches/batch-usage.ts, in that order).
local function finished_reply(rk, status, index)
  local f = redis.call('HMGET', rk[1], 'tenant', 'webhookUrl', 'batchId', 'conversationId', 'graph', 'graphVersion', 'concurrency',
    'inputTokens', 'cachedInputTokens', 'outputTokens', 'costUsd', 'uncachedCostUsd', 'createdAt', 'finishedAt')
  local reply = {status, tostring(index), f[1] or '', f[2] or '', f[3] or '', tostring(redis.call('HSTRLEN', rk[1], 'output')), f[4] or '', f[5] or '', f[6] or '', f[7] or ''}
  if f[3] then
    for i = 8, 14 do reply[#reply + 1] = f[i] or '' end
  end
  return reply
end
-- The run's usage after the last commit_step that went through (inputTokens, outputTokens, costUsd as
-- Redis holds them): an eager hop's step reads it from the transition's reply instead of a BEGIN.
local committed_usage = false
local function commit_step(rk, A)
local m = redis.call('HMGET', rk[1], 'status', 'superstep', 'stepCount', 'inputTokens', 'outputTokens', 'costUsd', 'deadlineAt', 'record', 'recordMax', 'ledger')
local status = m[1]
if not status then return {'missing'} end
-- The storage ledger read with the rest: the charge at the script's end need not read it again.
know_ledger(rk, m[10])
if tonumber(m[2]) ~= tonumber(A[1]) then return {'fenced'} end
local mode, now, maxlen = A[3], A[4], A[5]
-- A step that ends past its run's deadline (its worker was paused, say) is not committed; the
-- worker then fails the run with DEADLINE. A cancelling run still stops at this boundary as cancelled.
if m[7] and status == 'running' and tonumber(now) >= tonumber(m[7]) then return {'deadline'} end
-- A parallel sibling may still store its write while another task of the superstep waits for input.
if status ~= 'running' and status ~= 'cancelling' and not (status == 'waiting' and mode == 'task') then return {'fenced'} end
local index = -1
-- A single task's new step count goes in with the cursor's HSET below (one call fewer than HINCRBY).
local counted = {}
-- The bytes this commit adds, charged once at its end (a parallel task's at its own return).
local added = 0
if mode == 'single' or mode == 'task' then
  -- A single task's superstep has no stored writes: its commit is fenced by the cursor alone.
  if mode == 'task' and redis.call('HEXISTS', rk[6], A[2]) == 1 then return {'fenced'} end
  if mode == 'single' then
    index = tonumber(m[3] or '0')
    counted = {'stepCount', index + 1}
  else
    index = redis.call('HINCRBY', rk[1], 'stepCount', 1) - 1
  end
  redis.call('RPUSH', rk[4], '{"index":' .. index .. ',' .. string.sub(A[7], 2))
  added = #A[7] + #tostring(index) + 9
  committed_usage = {m[4] or '0', m[5] or '0', m[6] or '0'}
  -- A single task's tokens go in with the cursor's HSET too, added to the counts read above (whole
  -- numbers, exact in Lua's doubles up to 2^53); a parallel task's, which returns before it, by HINCRBY.
  for field = 1, 2 do
    local by = A[12 + field]
    if by ~= '0' then
      local name = field == 1 and 'inputTokens' or 'outputTokens'
      if mode == 'single' then
        committed_usage[field] = string.format('%d', tonumber(committed_usage[field]) + tonumber(by))
        counted[#counted + 1] = name
        counted[#counted + 1] = committed_usage[field]
      else
        committed_usage[field] = redis.call('HINCRBY', rk[1], name, by)
      end
    end
  end
  if A[15] ~= '0' then committed_usage[3] = redis.call('HINCRBYFLOAT', rk[1], 'costUsd', A[15]) end
  local tail = 18 + 2 * tonumber(A[17])
  tail = tail + tonumber(A[tail]) + 1
  if A[tail] and A[tail] ~= '0' then redis.call('HINCRBY', rk[1], 'cachedInputTokens', A[tail]) end
  if A[tail + 1] and A[tail + 1] ~= '0' then redis.call('HINCRBYFLOAT', rk[1], 'uncachedCostUsd', A[tail + 1]) end
  if A[16] == '1' then redis.call('HDEL', rk[7], 's' .. A[1] .. '.t' .. A[2]) end
  run_event(rk, maxlen, 'step-end', '{"index":' .. index .. ',' .. string.sub(A[12], 2))
  if mode == 'task' then
    redis.call('HSET', rk[6], A[2], A[8])
    if m[8] then record_put(rk, m[9], 'w' .. A[1] .. '.t' .. A[2], A[8]) end
    redis.call('HSET', rk[1], 'updatedAt', now)
    charge(rk, added)
    return {'stored', tostring(index), tostring(redis.call('HLEN', rk[6]))}
  end
else
  if redis.call('HLEN', rk[6]) ~= tonumber(A[9]) then return {'fenced'} end
  redis.call('DEL', rk[6])
end
local n = tonumber(A[17])
-- A state field's new value less the one it replaces, and the messages.
for i = 18, 16 + 2 * n, 2 do
  local old = redis.call('HSTRLEN', rk[2], A[i])
  added = added + #A[i + 1] - old + (old == 0 and #A[i] or 0)
end
push_from('HSET', rk[2], A, 18, 2 * n)
local pos = 18 + 2 * n
push_from('RPUSH', rk[3], A, pos + 1, tonumber(A[pos]))
added = added + bytes_of(A, pos + 1, tonumber(A[pos]))
if A[10] == 'completed' then added = added + #A[11] end
charge(rk, added)
local next_superstep = tonumber(A[1]) + 1
if m[8] then
  record_put(rk, m[9], 'b' .. next_superstep, boundary(redis.call('LLEN', rk[3]), A[10] == 'completed' and '[]' or A[11], A, 18, n))
end
if status == 'cancelling' and A[10] ~= 'completed' then
  -- The step finished despite the cancellation: keep its commit, then stop at this boundary.
  redis.call('HSET', rk[1], 'status', 'cancelled', 'error', {{CANCELLED_ERROR}}, 'superstep', next_superstep, 'tasks', A[11],
    'finishedAt', now, 'updatedAt', now, unpack(counted))
  run_event(rk, maxlen, 'run-end', {{CANCELLED_END}})
  expire_run(rk, A[6])
  return finished_reply(rk, 'cancelled', index)
end
if A[10] == 'completed' then
  redis.call('HSET', rk[1], 'status', 'completed', 'output', A[11], 'superstep', next_superstep, 'tasks', '[]',
    'finishedAt', now, 'updatedAt', now, unpack(counted))
  run_event(rk, maxlen, 'run-end', '{"status":"completed"}')
  expire_run(rk, A[6])
  return finished_reply(rk, 'completed', index)
end
redis.call('HSET', rk[1], 'superstep', next_superstep, 'tasks', A[11], 'updatedAt', now, unpack(counted))
return {'advanced', tostring(index)}
end
