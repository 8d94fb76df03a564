/**
 * Lua scripts of the run store. Each touches only one run's keys (one hash tag), so it is atomic in
 * Redis Cluster too. Every script that changes a run first checks the cursor (`superstep`) and the
 * status: that fence is what makes a committed step never run twice (invariant I1).
 *
 * Run keys, in the order `Keys.runAll` gives them:
 *   KEYS[1] meta · KEYS[2] state · KEYS[3] messages · KEYS[4] steps · KEYS[5] events · KEYS[6] writes · KEYS[7] memo
 */

import type { ErrorRecord } from '../errors.js';
import { STEP_META_FIELDS } from './run-meta.js';

/** The error a cancelled run ends with. */
export const CANCELLED_ERROR: ErrorRecord = { code: 'CANCELLED', message: 'the run was cancelled on request', retryable: false };
/** As Lua string literals (long brackets: JSON never contains "]]" here). */
const CANCELLED_ERROR_LUA = `[[${JSON.stringify(CANCELLED_ERROR)}]]`;
const CANCELLED_END_LUA = `[[${JSON.stringify({ status: 'cancelled', error: CANCELLED_ERROR })}]]`;

const TERMINAL = `
local function terminal(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
local function expire_all(seconds)
  for i = 1, 7 do redis.call('EXPIRE', KEYS[i], seconds) end
end
local function event(maxlen, kind, data)
  return redis.call('XADD', KEYS[5], 'MAXLEN', '~', maxlen, '*', 'type', kind, 'data', data)
end
-- cmd key ARGV[from .. from + count - 1], in as few calls as unpack's stack allows (count even for HSET).
local function push_all(cmd, key, from, count)
  local done = 0
  while done < count do
    local last = math.min(done + 500, count)
    redis.call(cmd, key, unpack(ARGV, from + done, from + last - 1))
    done = last
  end
end
`;

const STEP_FIELDS_LUA = STEP_META_FIELDS.map((field) => `'${field}'`).join(', ');

/**
 * The start of a step that will run: marks a queued run running (run-start), emits step-start and
 * replies with what the step reads. m: the run's STEP_META_FIELDS (HMGET), checked by the caller.
 */
const START_TASK = `
local function start_task(m, superstep, task, now, maxlen, start_data)
  if m[1] == 'queued' then
    redis.call('HSET', KEYS[1], 'status', 'running', 'startedAt', now, 'updatedAt', now)
    event(maxlen, 'run-start', '{}')
    m[1] = 'running'
  end
  event(maxlen, 'step-start', start_data)
  -- The state as one JSON object: its fields hold JSON already, so they go in as they are, and the worker
  -- decodes one string instead of a reply of 2n bulk strings (measured: a step's largest reply).
  local s = redis.call('HGETALL', KEYS[2])
  local fields = {}
  for i = 1, #s, 2 do fields[#fields + 1] = cjson.encode(s[i]) .. ':' .. s[i + 1] end
  -- The step's memos (saved paid work of an earlier attempt) come along, so a model call needs no read.
  return {'run', 'running', cjson.encode(m), '{' .. table.concat(fields, ',') .. '}', redis.call('HGET', KEYS[7], 's' .. superstep .. '.t' .. task)}
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
 * overwrite one that steps already appended to. A start job (DESIGN §2.1) also starts its task here,
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
if ARGV[5] == '' then return 'ok' end
return start_task(redis.call('HMGET', KEYS[1], ${STEP_FIELDS_LUA}), '0', ARGV[5], ARGV[1], ARGV[6], ARGV[7])
`;

/**
 * Read the cursor before doing anything (DESIGN §2 step 2). Decides what a step job should do and, when
 * it should run, marks the run running and emits step-start in the same round trip.
 * ARGV: 1 superstep · 2 task · 3 now · 4 events maxlen · 5 step-start data JSON
 * → {'missing'} | {'skip', status} | {'stale', status} | {'admit', status, meta pairs} | {'handoff', status, tasks, superstep}
 *   | {'written', status} | {'cancel', status} | {'run', status, STEP_META_FIELDS values as one JSON array (false: absent), state as one JSON object, memos JSON or nil}
 */
export const BEGIN_STEP = `${TERMINAL}${START_TASK}
local m = redis.call('HMGET', KEYS[1], ${STEP_FIELDS_LUA})
local status = m[1]
if not status then return {'missing'} end
if terminal(status) or status == 'waiting' then return {'skip', status} end
local current, k = tonumber(m[2]), tonumber(ARGV[1])
if current == k + 1 then return {'handoff', status, m[3], tostring(current)} end
-- Not taken in yet: the run's start job (superstep 0, task 0) takes it in, then runs its first task.
if not m[3] and status == 'queued' and k == 0 and ARGV[2] == '0' then return {'admit', status, redis.call('HGETALL', KEYS[1])} end
if current ~= k or not m[3] then return {'stale', status} end
-- Only a parallel superstep stores writes: its tasks JSON lists more than one object.
if (ARGV[2] ~= '0' or string.find(m[3], '},{', 1, true)) and redis.call('HEXISTS', KEYS[6], ARGV[2]) == 1 then return {'written', status} end
if status == 'cancelling' then return {'cancel', status} end
return start_task(m, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
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
 *   model usage, added to the run's) · 16 n · n state field/value pairs · m · m messages
 * → {'fenced'} | {'missing'} | {'stored', index, count} | {'advanced'|'completed'|'cancelled', index}
 */
export const COMMIT_STEP = `${TERMINAL}
local m = redis.call('HMGET', KEYS[1], 'status', 'superstep')
local status = m[1]
if not status then return {'missing'} end
if tonumber(m[2]) ~= tonumber(ARGV[1]) then return {'fenced'} end
local mode, now, maxlen = ARGV[3], ARGV[4], ARGV[5]
-- A parallel sibling may still store its write while another task of the superstep waits for input.
if status ~= 'running' and status ~= 'cancelling' and not (status == 'waiting' and mode == 'task') then return {'fenced'} end
local index = -1
if mode == 'single' or mode == 'task' then
  -- A single task's superstep has no stored writes: its commit is fenced by the cursor alone.
  if mode == 'task' and redis.call('HEXISTS', KEYS[6], ARGV[2]) == 1 then return {'fenced'} end
  index = redis.call('HINCRBY', KEYS[1], 'stepCount', 1) - 1
  redis.call('RPUSH', KEYS[4], '{"index":' .. index .. ',' .. string.sub(ARGV[7], 2))
  if ARGV[13] ~= '0' then redis.call('HINCRBY', KEYS[1], 'inputTokens', ARGV[13]) end
  if ARGV[14] ~= '0' then redis.call('HINCRBY', KEYS[1], 'outputTokens', ARGV[14]) end
  if ARGV[15] ~= '0' then redis.call('HINCRBYFLOAT', KEYS[1], 'costUsd', ARGV[15]) end
  redis.call('HDEL', KEYS[7], 's' .. ARGV[1] .. '.t' .. ARGV[2])
  event(maxlen, 'step-end', '{"index":' .. index .. ',' .. string.sub(ARGV[12], 2))
  if mode == 'task' then
    redis.call('HSET', KEYS[6], ARGV[2], ARGV[8])
    redis.call('HSET', KEYS[1], 'updatedAt', now)
    return {'stored', tostring(index), tostring(redis.call('HLEN', KEYS[6]))}
  end
else
  if redis.call('HLEN', KEYS[6]) ~= tonumber(ARGV[9]) then return {'fenced'} end
  redis.call('DEL', KEYS[6])
end
local n = tonumber(ARGV[16])
push_all('HSET', KEYS[2], 17, 2 * n)
local pos = 17 + 2 * n
push_all('RPUSH', KEYS[3], pos + 1, tonumber(ARGV[pos]))
local next_superstep = tonumber(ARGV[1]) + 1
if status == 'cancelling' and ARGV[10] ~= 'completed' then
  -- The step finished despite the cancellation: keep its commit, then stop at this boundary.
  redis.call('HSET', KEYS[1], 'status', 'cancelled', 'error', ${CANCELLED_ERROR_LUA}, 'superstep', next_superstep, 'tasks', ARGV[11],
    'finishedAt', now, 'updatedAt', now)
  event(maxlen, 'run-end', ${CANCELLED_END_LUA})
  expire_all(ARGV[6])
  return {'cancelled', tostring(index)}
end
if ARGV[10] == 'completed' then
  redis.call('HSET', KEYS[1], 'status', 'completed', 'output', ARGV[11], 'superstep', next_superstep, 'tasks', '[]',
    'finishedAt', now, 'updatedAt', now)
  event(maxlen, 'run-end', '{"status":"completed"}')
  expire_all(ARGV[6])
  return {'completed', tostring(index)}
end
redis.call('HSET', KEYS[1], 'superstep', next_superstep, 'tasks', ARGV[11], 'updatedAt', now)
return {'advanced', tostring(index)}
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
 * Retry a failed run from its last commit: back to running, expiry removed, same superstep.
 * ARGV: 1 now · 2 events maxlen
 * → {'ok', superstep, tasks} | {'missing'} | {'not-failed', status} | {'no-tasks'}
 */
export const RETRY_RUN = `${TERMINAL}
local m = redis.call('HMGET', KEYS[1], 'status', 'superstep', 'tasks')
if not m[1] then return {'missing'} end
if m[1] ~= 'failed' then return {'not-failed', m[1]} end
if not m[3] or m[3] == '[]' then return {'no-tasks'} end
redis.call('HSET', KEYS[1], 'status', 'running', 'updatedAt', ARGV[1])
redis.call('HDEL', KEYS[1], 'error', 'finishedAt')
for i = 1, 7 do redis.call('PERSIST', KEYS[i]) end
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
