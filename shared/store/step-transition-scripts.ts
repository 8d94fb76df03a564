/**
 * Engine v2's two step scripts (DESIGN §2): a step's whole transition in one round trip, and a cold fetch
 * that brings the job's cursor along. Both compose BullMQ's own scripts (bullmq-functions.ts) with the
 * run store's BEGIN and COMMIT (run-scripts.ts). Every key they touch carries the shard's hash tag: the
 * run's keys and the shard's step queue share one Redis Cluster slot, so each script stays atomic there.
 *
 * TRANSITION's queue keys (built by the script), K[8] … K[22]: wait · active · prioritized · events · stalled · limiter · delayed
 * · paused · meta · pc · completed · the current job's key · metrics:completed · marker · id. TAKE's are
 * moveToActive's eleven: wait · active · prioritized · events · stalled · limiter · delayed · paused · meta
 * · pc · marker.
 */
import { bullmqFunctionsLua } from '../bullmq/bullmq-functions.js';
import { RUN_KEY_SUFFIXES } from './keys.js';
import { RUN_STEP_FUNCTIONS } from './run-scripts.js';

const RUN_KEYS_LUA = `{${RUN_KEY_SUFFIXES.map((suffix) => `base .. ':${suffix}'`).join(', ')}}`;

/**
 * BEGIN for a job a script hands out: its run's keys are built from the job's data (a step job carries
 * its run id), so the worker gets the cursor, meta, state and memos with the job itself. → BEGIN's reply,
 * or false for a job that is not a well-formed step job (the worker then reads it the slow way).
 */
const DELIVER = `
local function deliver(fetched, now, maxlen, run_prefix, cached, fresh)
  local fields = fetched[1]
  if type(fields) ~= 'table' then return false end
  local data, atm
  for i = 1, #fields, 2 do
    if fields[i] == 'data' then data = fields[i + 1] elseif fields[i] == 'atm' then atm = fields[i + 1] end
  end
  if not data then return false end
  local ok, d = pcall(cjson.decode, data)
  if not ok or type(d) ~= 'table' or type(d.runId) ~= 'string' or type(d.superstep) ~= 'number' or type(d.task) ~= 'number' then return false end
  local base = run_prefix .. d.runId
  local rk = ${RUN_KEYS_LUA}
  local start = cjson.encode({node = d.node, superstep = d.superstep, task = d.task, attempt = (tonumber(atm) or 0) + 1})
  return begin_step(rk, d.superstep, d.task, now, maxlen, start, cached, fresh)
end
`;

/**
 * The lean hop: eager dispatch of a run's one next task, and the finish of the job that committed, as
 * BullMQ's addStandardJob + moveToActive and moveToFinished would leave them for a step job — the same
 * job hash, lists, lock, completed set and events (Bull Board and the stalled-job check see a BullMQ job)
 * — without what a step job never has: a parent, children, deduplication, metrics, a rate limiter, and
 * without the detour through the wait list (the job goes straight to the active list, as the old eager
 * path's add-then-pop left it). About half the calls of BullMQ's scripts and none of their msgpack.
 * Pinned, like the scripts it stands for, to BULLMQ_VERSION: test/unit/bullmq-functions.test.ts checks
 * that the lines it copies are still BullMQ's, test/integration/lean-hop.test.ts compares what it leaves
 * with what BullMQ's own scripts leave on a real Redis.
 *
 * lean_hop → the job it handed out (its request entry: id, name, data JSON, attempts) and the events
 * maxlen (for lean_finish), or false, false when the hop must go BullMQ's way: a paused or limited
 * queue, a job id that exists, or a current job whose lock is no longer this worker's (moveToFinished
 * then reports the right code).
 * Keys as STEP_TRANSITION's.
 */
const LEAN_HOP = `
local function lean_hop(job, job_id, token, prefix, now, lock_ms, worker_name)
  local q = redis.call('HMGET', K[16], 'paused', 'concurrency', 'max', 'opts.maxLenEvents')
  if q[1] or q[2] or q[3] then return false, false end
  if redis.call('GET', K[19] .. ':lock') ~= token then return false, false end
  local id = job[1]
  local job_key = prefix .. id
  if redis.call('EXISTS', job_key) == 1 then return false, false end
  local max_events = q[4]
  if not max_events then
    max_events = '10000'
    redis.call('HSET', K[16], 'opts.maxLenEvents', max_events)
  end
  -- addStandardJob's storeJob (opts as its cjson.encode would write them, in another key order), then
  -- prepareJobForProcessing's processedOn, pb and ats.
  local fields = {'name', job[2], 'data', job[3], 'opts', '{"jobId":' .. cjson.encode(id) .. ',"attempts":' .. job[4] .. ',"backoff":{"type":"agentq"}}',
    'timestamp', now, 'delay', '0', 'priority', '0', 'processedOn', now}
  if worker_name ~= '' then
    fields[#fields + 1] = 'pb'
    fields[#fields + 1] = worker_name
  end
  fields[#fields + 1] = 'ats'
  fields[#fields + 1] = '1'
  redis.call('HSET', job_key, unpack(fields))
  redis.call('XADD', K[11], '*', 'event', 'added', 'jobId', id, 'name', job[2])
  redis.call('LPUSH', K[9], id)
  redis.call('SET', job_key .. ':lock', token, 'PX', lock_ms)
  -- 'eager' marks the hand-over in the queue's event stream (QueueEvents passes it on as args.eager).
  redis.call('XADD', K[11], '*', 'event', 'active', 'jobId', id, 'prev', 'waiting', 'eager', '1')
  return job, max_events
end

-- moveToFinished of a completed step job whose lock lean_hop saw this worker hold. keep: completed jobs to
-- keep (-1 all, 0 none). attempts_made: the job's attempts made before this one (its hash's atm, which
-- nothing changes while this worker holds the lock): moveToFinished's HINCRBY of atm, folded into the
-- HSET of the kept job (one call fewer; a job not kept is deleted, atm and all). Deleting a job, only
-- the keys a step job can have: its hash and its logs — moveToFinished also deletes a parent's
-- dependencies, processed, failed and unsuccessful children, and step jobs have no children (four key
-- lookups and ~300 bytes of AOF per step fewer). → 0, or -3 (not in the active list) as moveToFinished.
local function lean_finish(job_id, now, max_events, keep, returnvalue, attempts_made)
  local job_key = K[19]
  redis.call('DEL', job_key .. ':lock')
  redis.call('SREM', K[12], job_id)
  if redis.call('LREM', K[9], -1, job_id) < 1 then return -3 end
  if keep == 0 then
    redis.call('DEL', job_key, job_key .. ':logs')
  else
    redis.call('ZADD', K[18], now, job_id)
    redis.call('HSET', job_key, 'returnvalue', returnvalue, 'finishedOn', now, 'atm', attempts_made + 1)
    if keep > 0 then
      local old = redis.call('ZREVRANGE', K[18], keep, -1)
      if #old > 0 then
        local prefix = string.sub(job_key, 1, #job_key - #job_id)
        for _, old_id in ipairs(old) do
          local old_key = prefix .. old_id
          redis.call('DEL', old_key, old_key .. ':logs')
        end
        redis.call('ZREMRANGEBYRANK', K[18], 0, -(keep + 1))
      end
    end
  end
  -- moveToFinished trims the stream (XTRIM ~) before it emits; trimmed here by the same XADD (one call
  -- fewer): '~' trims whole nodes from the old end only, never the entries this script just added.
  redis.call('XADD', K[11], 'MAXLEN', '~', max_events, '*', 'event', 'completed', 'jobId', job_id, 'returnvalue', returnvalue, 'prev', 'active')
  return 0
end
`;

/**
 * One step's transition: fence + commit (COMMIT), the next superstep's jobs with their deterministic ids
 * (BullMQ's addStandardJob, or addPrioritizedJob for a run with a priority), finishing the current job (BullMQ's moveToFinished, which may fetch the next
 * job of the queue) and BEGIN of the job handed out — in one script, so "committed but not handed on"
 * cannot happen. Eager dispatch: a single next task may go straight to this worker as an active job (its
 * own id, attempts, lock and Bull Board row), instead of through the wait list.
 *
 * KEYS: 1 the committing run's meta key (the script builds the rest: K[1-7] the run's keys, K[8-22] the shard
 *   queue's keys as listed above)
 * ARGV: COMMIT's arguments (run-scripts.ts), then at t (after COMMIT's messages):
 *   t current job id ('' = none to finish: a parallel superstep's advance) · t+1 lock token · t+2 fetch next
 *   ('1'|'0') · t+3 eager ('1'|'0') · t+4 queue key prefix · t+5 lock duration ms · t+6 completed jobs to keep
 *   (-1 all) · t+7 the current job's attempts · t+8 worker name ('' none) · t+9 run key prefix of the shard
 *   · t+10 next jobs JSON [[id, name, data JSON, attempts], …] · t+11 the finished job's return value (JSON)
 *   · t+12 the run's BullMQ priority (0 none: the wait list; > 0 the prioritized set, 1 most urgent)
 *   · t+13 the current job's attempts made (its atm) · t+14 inline steps c (0 none) · then c blocks, each: its
 *   length L · step-start data JSON · L-1 COMMIT arguments
 * → {the last COMMIT's reply, moveToFinished's code (0 or < 0; 0 when no job), the job handed out as BullMQ's
 *   [fields, id, rate-limit delay, delay until] or nil, its BEGIN reply or nil, 1 when it came eagerly,
 *   inline steps committed}; after a lean hop {the last COMMIT's reply, code, nil, nil, 2, inline steps
 *   committed, the run's {inputTokens, outputTokens, costUsd}}: the worker makes the job it handed out (its
 *   one next job) and its BEGIN from its own request (worker/engine/step-transitions.ts)
 */
export const STEP_TRANSITION = `${RUN_STEP_FUNCTIONS}${bullmqFunctionsLua(['addStandardJob', 'addPrioritizedJob', 'moveToFinished'])}${DELIVER}
-- The run's and the shard queue's keys, built here from K[1] (the run's meta key) and the queue
-- prefix: one declared key instead of 22 (a third of the request's bytes). Redis Cluster allows
-- undeclared keys of the declared key's slot, and every one of these carries the shard's hash tag.
local K
${LEAN_HOP}
local t = 18 + 2 * tonumber(ARGV[17])
t = t + tonumber(ARGV[t]) + 1
local job_id, token, prefix, now, maxlen = ARGV[t], ARGV[t + 1], ARGV[t + 4], ARGV[4], ARGV[5]
local lock_ms, worker_name = tonumber(ARGV[t + 5]), ARGV[t + 8]
do
  local base = string.sub(KEYS[1], 1, #KEYS[1] - 5)
  K = ${RUN_KEYS_LUA}
  for _, name in ipairs({'wait', 'active', 'prioritized', 'events', 'stalled', 'limiter', 'delayed', 'paused', 'meta', 'pc', 'completed'}) do
    K[#K + 1] = prefix .. name
  end
  K[19] = prefix .. job_id
  K[20] = prefix .. 'metrics:completed'
  K[21] = prefix .. 'marker'
  K[22] = prefix .. 'id'
end

local committed = commit_step(K, ARGV)
-- Inline steps (nodes marked inline: true, run by this job after its own): each committed in turn, fenced
-- like any step, with its step-start event; the run's next jobs are those after the last one.
local inline_at = t + 14
local at, inlined = inline_at + 1, 0
for _ = 1, tonumber(ARGV[inline_at] or '0') do
  if committed[1] ~= 'advanced' then break end
  local len = tonumber(ARGV[at])
  run_event(K, maxlen, 'step-start', ARGV[at + 1])
  committed = commit_step(K, {unpack(ARGV, at + 2, at + len)})
  inlined = inlined + 1
  at = at + len + 1
end
local eager = false
-- The lean hop (see LEAN_HOP): the common case, one next task of a run without a priority handed back to
-- this worker, whose own job is still locked by it; whatever else goes BullMQ's own way below.
-- lean: the events maxlen once it hopped (false: it did not); hopped: the job it handed out.
local lean, hopped = false, false
if committed[1] == 'advanced' then
  local jobs = cjson.decode(ARGV[t + 10])
  local priority = tonumber(ARGV[t + 12])
  if #jobs == 1 and priority == 0 and ARGV[t + 3] == '1' and job_id ~= '' then
    hopped, lean = lean_hop(jobs[1], job_id, token, prefix, now, lock_ms, worker_name)
  end
  if not lean then
  for _, job in ipairs(jobs) do
    local args = cmsgpack.pack({prefix, job[1], job[2], now})
    if priority > 0 then
      local opts = cmsgpack.pack({jobId = job[1], attempts = job[4], backoff = {type = 'agentq'}, priority = priority})
      bull_addPrioritizedJob({K[21], K[16], K[22], K[10], K[14], K[18], K[9], K[11], K[17]}, {args, job[3], opts})
    else
      local opts = cmsgpack.pack({jobId = job[1], attempts = job[4], backoff = {type = 'agentq'}})
      bull_addStandardJob({K[8], K[15], K[16], K[22], K[18], K[14], K[9], K[11], K[21]}, {args, job[3], opts})
    end
  end
  -- Eager dispatch: only on an unpaused queue with no global concurrency or rate limit, and only when the
  -- job was just added (not a duplicate of a job that existed: it is the newest in the wait list). The
  -- run's next step may go ahead of jobs of its own urgency (the hop limit bounds that), never of more
  -- urgent ones: a run with a priority hops only while nothing waits without one (BullMQ takes those
  -- first) and no prioritized job is more urgent (the set's score is priority * 2^32 + a counter).
  if #jobs == 1 and ARGV[t + 3] == '1' and job_id ~= '' then
    local q = redis.call('HMGET', K[16], 'paused', 'concurrency', 'max')
    local id = jobs[1][1]
    local next_up
    if priority > 0 then
      local head = redis.call('ZRANGE', K[10], 0, 0, 'WITHSCORES')
      next_up = head[1] ~= nil and math.floor(tonumber(head[2]) / 0x100000000) >= priority and redis.call('LLEN', K[8]) == 0
        and redis.call('ZSCORE', K[10], id) ~= false
    else
      next_up = redis.call('LINDEX', K[8], 0) == id
    end
    if not q[1] and not q[2] and not q[3] and next_up then
      if priority > 0 then redis.call('ZREM', K[10], id) else redis.call('LPOP', K[8]) end
      redis.call('LPUSH', K[9], id)
      -- What BullMQ's prepareJobForProcessing does for a queue without a rate limiter (bullmq 6.7.0).
      local job_key = prefix .. id
      redis.call('SET', job_key .. ':lock', token, 'PX', lock_ms)
      -- 'eager' marks the hand-over in the queue's event stream (QueueEvents passes it on as args.eager).
      redis.call('XADD', K[11], '*', 'event', 'active', 'jobId', id, 'prev', 'waiting', 'eager', '1')
      if worker_name ~= '' then redis.call('HSET', job_key, 'processedOn', now, 'pb', worker_name) else redis.call('HSET', job_key, 'processedOn', now) end
      redis.call('HINCRBY', job_key, 'ats', 1)
      eager = {redis.call('HGETALL', job_key), id, 0, 0}
    end
  end
  end
end

local code = 0
local fetched = false
if lean then
  code = lean_finish(job_id, now, lean, tonumber(ARGV[t + 6]), ARGV[t + 11], tonumber(ARGV[t + 13]))
  -- The job the lean hop handed back is the one the worker described in its request (ARGV[t + 10]), at the
  -- cursor its commit just set: the worker makes it and its BEGIN itself (step-transitions.ts), so the
  -- reply carries only what the worker cannot know, the run's usage as Redis now holds it. Its step
  -- starts here, as BEGIN would start it (a running run, a step no attempt began before).
  run_event(K, maxlen, 'step-start', '{"node":' .. cjson.encode(hopped[2]) .. ',"superstep":' .. (tonumber(ARGV[1]) + 1 + inlined) .. ',"task":0,"attempt":1}')
  return {committed, code, false, false, 2, inlined, committed_usage}
elseif job_id ~= '' then
  local keep = tonumber(ARGV[t + 6])
  local opts = cmsgpack.pack({token = token, keepJobs = {count = keep}, lockDuration = lock_ms, attempts = tonumber(ARGV[t + 7]),
    maxMetricsSize = '', name = worker_name ~= '' and worker_name or nil})
  local fetch = (ARGV[t + 2] == '1' and not eager) and '1' or '0'
  local finished = bull_moveToFinished({K[8], K[9], K[10], K[11], K[12], K[13], K[14], K[15], K[16],
    K[17], K[18], K[19], K[20], K[21]}, {job_id, now, 'returnvalue', ARGV[t + 11], 'completed', fetch, prefix, opts})
  if type(finished) == 'table' then fetched = finished else code = finished end
end

local handed = eager or fetched
local begun = false
if handed and type(handed[1]) == 'table' then
  -- The eager job's run is this run, whose state the worker has just computed: it needs no copy of it.
  -- It is also a step no attempt began before (its superstep was reached just now): it has no memos.
  begun = deliver(handed, now, maxlen, ARGV[t + 9], eager and tostring(tonumber(ARGV[1]) + 1 + inlined) or '', eager ~= false)
end
return {committed, code, handed, begun, eager and 1 or 0, inlined}
`;

/**
 * A cold fetch (no transition handed a job out): BullMQ's moveToActive, then BEGIN of the job it took,
 * up to ARGV[8] times — a worker with many free slots fills them in one round trip instead of one per
 * slot. The i-th job (i > 1) is locked with token ARGV[3] .. '.' .. i. It stops at the first
 * moveToActive that takes nothing (an empty, paused or rate-limited queue), whose reply is the last.
 * KEYS: moveToActive's eleven queue keys (see above)
 * ARGV: 1 queue key prefix · 2 now · 3 lock token · 4 lock duration ms · 5 worker name ('' none)
 *   · 6 run key prefix of the shard · 7 events maxlen · 8 jobs wanted
 * → a list of {moveToActive's [fields, id, rate-limit delay, delay until], BEGIN reply or false, lock token}
 */
export const STEP_TAKE = `${RUN_STEP_FUNCTIONS}${bullmqFunctionsLua(['moveToActive'])}${DELIVER}
local out = {}
for i = 1, tonumber(ARGV[8]) do
  local token = i == 1 and ARGV[3] or ARGV[3] .. '.' .. i
  local opts = cmsgpack.pack({token = token, lockDuration = tonumber(ARGV[4]), name = ARGV[5] ~= '' and ARGV[5] or nil})
  local taken = bull_moveToActive({KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]},
    {ARGV[1], ARGV[2], opts})
  local begun = false
  if type(taken[1]) == 'table' then begun = deliver(taken, ARGV[2], ARGV[7], ARGV[6], '', false) end
  out[i] = {taken, begun, token}
  if type(taken[1]) ~= 'table' then break end
end
return out
`;

/**
 * A producer's enqueue in one script: creates the run (as CREATE_RUN) and adds its start job to the
 * run's shard queue (BullMQ's addStandardJob); a run that exists but was never taken in gets its start
 * job again (the deterministic id dedupes it). One round trip, and no BullMQ Job built in the producer.
 * KEYS: 1-7 the run's keys · 8-16 addStandardJob's queue keys: wait · paused · meta · id · completed · delayed
 *   · active · events · marker · 17 prioritized · 18 pc (addPrioritizedJob's, for a run with a priority)
 * ARGV: 1 queue key prefix · 2 start job id · 3 job name · 4 job data JSON · 5 attempts · 6 now · 7 BullMQ
 *   priority (0 none) · then the meta hash's field/value pairs
 * → 1 created, or the existing run's meta pairs
 */
export const CREATE_RUN_AND_START = `${bullmqFunctionsLua(['addStandardJob', 'addPrioritizedJob'])}
local function add_start(priority)
  local args = cmsgpack.pack({ARGV[1], ARGV[2], ARGV[3], ARGV[6]})
  if priority > 0 then
    local opts = cmsgpack.pack({jobId = ARGV[2], attempts = tonumber(ARGV[5]), backoff = {type = 'agentq'}, priority = priority})
    bull_addPrioritizedJob({KEYS[16], KEYS[10], KEYS[11], KEYS[17], KEYS[13], KEYS[12], KEYS[14], KEYS[15], KEYS[18]}, {args, ARGV[4], opts})
  else
    local opts = cmsgpack.pack({jobId = ARGV[2], attempts = tonumber(ARGV[5]), backoff = {type = 'agentq'}})
    bull_addStandardJob({KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[15], KEYS[16]}, {args, ARGV[4], opts})
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  local m = redis.call('HMGET', KEYS[1], 'status', 'tasks', 'priority')
  if m[1] == 'queued' and not m[2] then add_start(tonumber(m[3]) or 0) end
  return redis.call('HGETALL', KEYS[1])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 8))
add_start(tonumber(ARGV[7]))
return 1
`;
