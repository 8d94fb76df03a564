/**
 * Lua scripts of the run store. Each touches only one run's keys (one hash tag), so it is atomic in
 * Redis Cluster too. Every script that changes a run first checks the cursor (`superstep`) and the
 * status: that fence is what makes a committed step never run twice.
 *
 * Run keys, in the order `Keys.runAll` gives them:
 *   KEYS[1] meta · KEYS[2] state · KEYS[3] messages · KEYS[4] steps · KEYS[5] events · KEYS[6] writes · KEYS[7] memo
 *   · KEYS[8] record (time travel's recording)
 */

import type { ErrorRecord } from '../contracts/errors.js';
import { RUN_KEY_SUFFIXES } from './keys.js';
import { STEP_META_FIELDS } from './run-meta.js';

const RUN_KEY_COUNT = RUN_KEY_SUFFIXES.length;

/** The error a cancelled run ends with. */
export const CANCELLED_ERROR: ErrorRecord = {
  code: 'CANCELLED',
  message: 'the run was cancelled on request',
  retryable: false,
};
/** As Lua string literals (long brackets: JSON never contains "]]" here). */
const CANCELLED_ERROR_LUA = `[[${JSON.stringify(CANCELLED_ERROR)}]]`;
const CANCELLED_END_LUA = `[[${JSON.stringify({ status: 'cancelled', error: CANCELLED_ERROR })}]]`;

/** The recording's helpers: every script that may record includes them (through TERMINAL). */
export const RECORD_LUA = `
-- The run's recording for time travel (rk[8]): writes field unless the run's byte budget (max) is spent. The first
-- write refused names itself in 'over' and fills the budget, so later writes are refused too: a recording
-- is whole up to the point it stops, never with holes.
local function record_put(rk, max, field, value)
  local size = #field + #value
  local used = redis.call('HINCRBY', rk[8], 'bytes', size)
  if used > tonumber(max) then
    redis.call('HSET', rk[8], 'bytes', max)
    redis.call('HSETNX', rk[8], 'over', field)
    return false
  end
  redis.call('HSET', rk[8], field, value)
  return true
end
-- A superstep boundary as the recording keeps it (b<k>): the history's length, the tasks and the state
-- change (its changed keys, values as JSON already), from args[from .. from + 2n - 1].
local function boundary(messages_len, tasks, args, from, n)
  local s = {}
  for i = 0, n - 1 do s[#s + 1] = cjson.encode(args[from + 2 * i]) .. ':' .. args[from + 2 * i + 1] end
  return '{"m":' .. messages_len .. ',"t":' .. tasks .. ',"s":{' .. table.concat(s, ',') .. '}}'
end
`;

/**
 * Helpers every script shares. `rk` is a run's eight keys in RUN_KEY_SUFFIXES order: KEYS itself in the
 * scripts over one run, or a table built in Lua for the run of a job a transition hands out.
 */
export const TERMINAL = `
local function terminal(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
local function run_event(rk, maxlen, kind, data)
  return redis.call('XADD', rk[5], 'MAXLEN', '~', maxlen, '*', 'type', kind, 'data', data)
end
local function event(maxlen, kind, data)
  return run_event(KEYS, maxlen, kind, data)
end
local function expire_run(rk, seconds)
  for i = 1, ${RUN_KEY_COUNT} do redis.call('EXPIRE', rk[i], seconds) end
end
local function expire_all(seconds)
  expire_run(KEYS, seconds)
end
-- cmd key args[from .. from + count - 1], in as few calls as unpack's stack allows (count even for HSET).
local function push_from(cmd, key, args, from, count)
  local done = 0
  while done < count do
    local last = math.min(done + 500, count)
    redis.call(cmd, key, unpack(args, from + done, from + last - 1))
    done = last
  end
end
local function push_all(cmd, key, from, count)
  push_from(cmd, key, ARGV, from, count)
end

${RECORD_LUA}`;

const STEP_FIELDS_LUA = STEP_META_FIELDS.map((field) => `'${field}'`).join(', ');

/**
 * The start of a step that will run: marks a queued run running (run-start), emits step-start and
 * replies with what the step reads. m: the run's STEP_META_FIELDS (HMGET), checked by the caller.
 * skip_state: the caller holds the state at this cursor already (its cache), so none is sent.
 */
const START_TASK = `
local function start_task(rk, m, superstep, task, now, maxlen, start_data, skip_state, fresh)
  if m[1] == 'queued' then
    redis.call('HSET', rk[1], 'status', 'running', 'startedAt', now, 'updatedAt', now)
    run_event(rk, maxlen, 'run-start', '{}')
    m[1] = 'running'
  end
  run_event(rk, maxlen, 'step-start', start_data)
  local state = false
  if not skip_state then
    -- The state as one JSON object: its fields hold JSON already, so they go in as they are, and the
    -- worker decodes one string instead of a reply of 2n bulk strings (measured: a step's largest reply).
    local s = redis.call('HGETALL', rk[2])
    local fields = {}
    for i = 1, #s, 2 do fields[#fields + 1] = cjson.encode(s[i]) .. ':' .. s[i + 1] end
    state = '{' .. table.concat(fields, ',') .. '}'
  end
  -- The step's memos (saved paid work of an earlier attempt) come along, so a model call needs no read.
  -- fresh: no attempt of this step began before (its superstep was reached in the calling script).
  return {'run', 'running', cjson.encode(m), state, not fresh and redis.call('HGET', rk[7], 's' .. superstep .. '.t' .. task) or false}
end
`;

/**
 * Read the cursor before doing anything (docs/concepts/step-engine.md): what a step job of (superstep k, task) should
 * do, and when it should run, mark the run running and emit step-start in the same script.
 * cached: the superstep whose state the caller holds ('' = none); state is sent only when the cursor differs.
 * → {'missing'} | {'skip', status} | {'stale', status} | {'admit', status, meta pairs}
 *   | {'written', status} | {'cancel', status} | {'run', status, STEP_META_FIELDS values as one JSON array
 *   (false: absent), state as one JSON object or nil (cached), memos JSON or nil}
 * A cursor one past k means a committed step: engine v2 adds the next jobs in the commit's own script,
 * so such a job is a stale duplicate (a lost job is the reconciler's business).
 */
const BEGIN_FN = `
local function begin_step(rk, k_arg, task, now, maxlen, start_data, cached, fresh)
  local m = redis.call('HMGET', rk[1], ${STEP_FIELDS_LUA})
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
`;

/** ARGV: field/value pairs of the meta hash. Creates the run unless it exists. → 1 created, or the existing run's meta pairs */
export const CREATE_RUN = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/**
 * The intake's hand-over: initial state, the first superstep's tasks, and the messages a conversation's
 * run starts with — in one script, so a duplicate intake delivery can never seed a history twice or
 * overwrite one that steps already appended to. A start job (docs/concepts/step-engine.md) also starts its task here,
 * which saves it a second BEGIN.
 * ARGV: 1 now · 2 graphVersion · 3 tasks JSON · 4 trace ('' = none) · 5 task to start ('' = none)
 *   · 6 events maxlen · 7 step-start data JSON · 8 n · then n state field/value pairs · then m · m messages
 *   JSON (m may be absent: no messages)
 * → 'ok' | 'missing' | 'admitted' (done before) | <status> (no longer queued) | BEGIN's 'run' reply (task started)
 */
export const ADMIT_RUN = `${TERMINAL}${START_TASK}
local m = redis.call('HMGET', KEYS[1], 'status', 'tasks')
if not m[1] then return 'missing' end
if m[2] then return 'admitted' end
if m[1] ~= 'queued' then return m[1] end
local n = tonumber(ARGV[8])
push_all('HSET', KEYS[2], 9, 2 * n)
local pos = 9 + 2 * n
local seeded = tonumber(ARGV[pos] or '0')
if seeded > 0 then
  redis.call('DEL', KEYS[3])
  push_all('RPUSH', KEYS[3], pos + 1, seeded)
end
redis.call('HSET', KEYS[1], 'graphVersion', ARGV[2], 'tasks', ARGV[3], 'superstep', 0, 'updatedAt', ARGV[1])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'trace', ARGV[4]) end
local rec = redis.call('HMGET', KEYS[1], 'record', 'recordMax')
if rec[1] then record_put(KEYS, rec[2], 'b0', boundary(seeded, ARGV[3], ARGV, 9, n)) end
if ARGV[5] == '' then return 'ok' end
return start_task(KEYS, redis.call('HMGET', KEYS[1], ${STEP_FIELDS_LUA}), '0', ARGV[5], ARGV[1], ARGV[6], ARGV[7], false)
`;

/** BEGIN on its own (a job fetched without its cursor). ARGV: 1 superstep · 2 task · 3 now · 4 events maxlen · 5 step-start data JSON · 6 cached superstep ('' = none) */
export const BEGIN_STEP = `${TERMINAL}${START_TASK}${BEGIN_FN}
return begin_step(KEYS, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
`;

/**
 * Commit a step: state update, history append, step record, step-end event, cursor advance — atomically,
 * fenced on the superstep. Modes:
 *  - 'single': the only task of its superstep; record and advance at once.
 *  - 'task':   one of several parallel tasks; store its write, record it; → {'stored', index, writesSoFar}
 *  - 'advance': after all tasks stored their writes, apply the merged update and advance.
 * ARGV: 1 superstep · 2 task · 3 mode · 4 now · 5 events maxlen · 6 retention s · 7 step record JSON (without
 *   index) · 8 task write JSON · 9 total tasks · 10 outcome ('next'|'completed') · 11 next tasks JSON or output JSON
 *   · 12 step-end data JSON (without index) · 13 input tokens · 14 output tokens · 15 cost USD (the step's
 *   model usage, added to the run's) · 16 '1' when the step may have memos to drop (its BEGIN brought some
 *   or it saved some), else '0' · 17 n · n state field/value pairs · m · m messages
 * → {'fenced'} | {'missing'} | {'stored', index, count} | {'advanced', index}
 *   | {'completed'|'cancelled', index, tenant, webhook URL, batch id ('' none), output bytes, conversation id ('' none)}
 */
const COMMIT_FN = `
-- A run this commit finished: with what its finish hooks need (tenant, webhook URL, batch, output
-- length, conversation), so the worker need not read them back before it hands the batch's slot on.
local function finished_reply(rk, status, index)
  local f = redis.call('HMGET', rk[1], 'tenant', 'webhookUrl', 'batchId', 'conversationId')
  return {status, tostring(index), f[1] or '', f[2] or '', f[3] or '', tostring(redis.call('HSTRLEN', rk[1], 'output')), f[4] or ''}
end
-- The run's usage after the last commit_step that went through (inputTokens, outputTokens, costUsd as
-- Redis holds them): an eager hop's step reads it from the transition's reply instead of a BEGIN.
local committed_usage = false
local function commit_step(rk, A)
local m = redis.call('HMGET', rk[1], 'status', 'superstep', 'stepCount', 'inputTokens', 'outputTokens', 'costUsd', 'deadlineAt', 'record', 'recordMax')
local status = m[1]
if not status then return {'missing'} end
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
  committed_usage = {m[4] or '0', m[5] or '0', m[6] or '0'}
  if A[13] ~= '0' then committed_usage[1] = redis.call('HINCRBY', rk[1], 'inputTokens', A[13]) end
  if A[14] ~= '0' then committed_usage[2] = redis.call('HINCRBY', rk[1], 'outputTokens', A[14]) end
  if A[15] ~= '0' then committed_usage[3] = redis.call('HINCRBYFLOAT', rk[1], 'costUsd', A[15]) end
  if A[16] == '1' then redis.call('HDEL', rk[7], 's' .. A[1] .. '.t' .. A[2]) end
  run_event(rk, maxlen, 'step-end', '{"index":' .. index .. ',' .. string.sub(A[12], 2))
  if mode == 'task' then
    redis.call('HSET', rk[6], A[2], A[8])
    if m[8] then record_put(rk, m[9], 'w' .. A[1] .. '.t' .. A[2], A[8]) end
    redis.call('HSET', rk[1], 'updatedAt', now)
    return {'stored', tostring(index), tostring(redis.call('HLEN', rk[6]))}
  end
else
  if redis.call('HLEN', rk[6]) ~= tonumber(A[9]) then return {'fenced'} end
  redis.call('DEL', rk[6])
end
local n = tonumber(A[17])
push_from('HSET', rk[2], A, 18, 2 * n)
local pos = 18 + 2 * n
push_from('RPUSH', rk[3], A, pos + 1, tonumber(A[pos]))
local next_superstep = tonumber(A[1]) + 1
if m[8] then
  record_put(rk, m[9], 'b' .. next_superstep, boundary(redis.call('LLEN', rk[3]), A[10] == 'completed' and '[]' or A[11], A, 18, n))
end
if status == 'cancelling' and A[10] ~= 'completed' then
  -- The step finished despite the cancellation: keep its commit, then stop at this boundary.
  redis.call('HSET', rk[1], 'status', 'cancelled', 'error', ${CANCELLED_ERROR_LUA}, 'superstep', next_superstep, 'tasks', A[11],
    'finishedAt', now, 'updatedAt', now, unpack(counted))
  run_event(rk, maxlen, 'run-end', ${CANCELLED_END_LUA})
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
`;

/** Commit on its own (a parallel superstep's advance has no job to finish). ARGV as COMMIT_FN's A. */
export const COMMIT_STEP = `${TERMINAL}${COMMIT_FN}
return commit_step(KEYS, ARGV)
`;

/**
 * End a run that is not finished: failed or cancelled, the last committed context kept.
 * ARGV: 1 superstep to fence on ('' = any) · 2 status · 3 error JSON · 4 now · 5 events maxlen · 6 retention s
 *   · 7 run-end data JSON · 8 only from this status ('' = any non-terminal)
 * → 'ok' | 'missing' | 'terminal' | 'fenced'
 */
export const FINISH_RUN = `${TERMINAL}
local m = redis.call('HMGET', KEYS[1], 'status', 'superstep')
if not m[1] then return 'missing' end
if terminal(m[1]) then return 'terminal' end
if ARGV[1] ~= '' and tonumber(m[2]) ~= tonumber(ARGV[1]) then return 'fenced' end
if ARGV[8] ~= '' and m[1] ~= ARGV[8] then return 'fenced' end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'error', ARGV[3], 'finishedAt', ARGV[4], 'updatedAt', ARGV[4])
event(ARGV[5], 'run-end', ARGV[7])
expire_all(ARGV[6])
return 'ok'
`;

/**
 * A cancellation request. A run with no step in flight (queued, waiting) is cancelled at once; a
 * running one becomes 'cancelling' and the worker ends it at the step boundary.
 * ARGV: 1 now · 2 events maxlen · 3 retention s · 4 error JSON · 5 run-end data JSON
 * → the status after the request, or 'missing'
 */
export const REQUEST_CANCEL = `${TERMINAL}
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 'missing' end
if terminal(status) or status == 'cancelling' then return status end
if status == 'running' then
  redis.call('HSET', KEYS[1], 'status', 'cancelling', 'updatedAt', ARGV[1])
  return 'cancelling'
end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'error', ARGV[4], 'finishedAt', ARGV[1], 'updatedAt', ARGV[1])
event(ARGV[2], 'run-end', ARGV[5])
expire_all(ARGV[3])
return 'cancelled'
`;

/**
 * Retry a failed run from its last commit: back to running, expiry removed, same superstep. The run keeps
 * a link to the attempt that failed (retryOf: how many attempts before, the last one's error and end).
 * ARGV: 1 now · 2 events maxlen · 3 the failure to retry: its finishedAt ('' = whichever): a bulk retry
 *   that matched a run's failure never retries a later one (another command retried it meanwhile)
 * → {'ok', superstep, tasks} | {'missing'} | {'not-failed', status} | {'no-tasks'}
 */
export const RETRY_RUN = `${TERMINAL}
local m = redis.call('HMGET', KEYS[1], 'status', 'superstep', 'tasks', 'error', 'finishedAt', 'retryOf')
if not m[1] then return {'missing'} end
if m[1] ~= 'failed' then return {'not-failed', m[1]} end
if ARGV[3] and ARGV[3] ~= '' and m[5] ~= ARGV[3] then return {'not-failed', 'retried since'} end
if not m[3] or m[3] == '[]' then return {'no-tasks'} end
local attempts = 1
if m[6] then attempts = (tonumber(cjson.decode(m[6])['attempts']) or 0) + 1 end
redis.call('HSET', KEYS[1], 'status', 'running', 'updatedAt', ARGV[1],
  'retryOf', '{"attempts":' .. attempts .. ',"error":' .. (m[4] or 'null') .. ',"failedAt":' .. (m[5] or 'null') .. '}')
redis.call('HDEL', KEYS[1], 'error', 'finishedAt')
for i = 1, ${RUN_KEY_COUNT} do redis.call('PERSIST', KEYS[i]) end
event(ARGV[2], 'run-retry', '{"superstep":' .. m[2] .. '}')
return {'ok', m[2], m[3]}
`;

/**
 * A node asked for input: the run waits (no job in flight) until it is resumed or cancelled.
 * ARGV: 1 superstep · 2 now · 3 events maxlen · 4 interrupt JSON {node, stepId, request} · 5 run-waiting data JSON
 * → 'ok' | 'missing' | 'fenced'
 */
export const INTERRUPT_RUN = `${TERMINAL}
local m = redis.call('HMGET', KEYS[1], 'status', 'superstep')
if not m[1] then return 'missing' end
if m[1] ~= 'running' or tonumber(m[2]) ~= tonumber(ARGV[1]) then return 'fenced' end
redis.call('HSET', KEYS[1], 'status', 'waiting', 'interrupt', ARGV[4], 'updatedAt', ARGV[2])
event(ARGV[3], 'run-waiting', ARGV[5])
return 'ok'
`;

/**
 * Answer a waiting run: the interrupted step runs again and its `interrupt()` returns the value.
 * ARGV: 1 now · 2 events maxlen · 3 value JSON
 * → {'ok', superstep} | {'missing'} | {'not-waiting', status}
 */
export const RESUME_RUN = `${TERMINAL}
local m = redis.call('HMGET', KEYS[1], 'status', 'superstep', 'interrupt')
if not m[1] then return {'missing'} end
if m[1] ~= 'waiting' then return {'not-waiting', m[1]} end
local pending = cjson.decode(m[3])
redis.call('HSET', KEYS[1], 'status', 'running', 'resume', '{"stepId":' .. cjson.encode(pending['stepId']) .. ',"value":' .. ARGV[3] .. '}', 'updatedAt', ARGV[1])
redis.call('HDEL', KEYS[1], 'interrupt')
event(ARGV[2], 'run-resume', '{"stepId":' .. cjson.encode(pending['stepId']) .. '}')
return {'ok', m[2]}
`;

/** The run side of engine v2's transition and take scripts (step-transition-scripts.ts): BEGIN and COMMIT as Lua functions. */
export const RUN_STEP_FUNCTIONS = `${TERMINAL}${START_TASK}${BEGIN_FN}${COMMIT_FN}`;
