/**
 * Engine v2's two step scripts (docs/concepts/step-engine.md): a step's whole transition in one round trip, and a cold
 * fetch that brings the job's cursor along. Both compose BullMQ's own scripts with the run store's BEGIN and
 * COMMIT (run-scripts.ts), through the BullMQ seam's named Lua helpers (shared/bullmq/bullmq-lua.ts):
 * nothing here knows a BullMQ key's position, option encoding or job-hash field. Every key they touch
 * carries the shard's hash tag: the run's keys and the shard's step queue share one Redis Cluster slot,
 * so each script stays atomic there. `rk` is a run's seven keys (run-scripts.ts), `q` the shard queue's
 * keys by BullMQ's names (`bullmq_queue_keys`).
 */
import { bullmqLua } from '../bullmq/bullmq-lua.js';
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
  local data, atm = bullmq_job_data(fetched)
  if not data then return false end
  local ok, d = pcall(cjson.decode, data)
  if not ok or type(d) ~= 'table' or type(d.runId) ~= 'string' or type(d.superstep) ~= 'number' or type(d.task) ~= 'number' then return false end
  local base = run_prefix .. d.runId
  local rk = ${RUN_KEYS_LUA}
  local start = cjson.encode({node = d.node, superstep = d.superstep, task = d.task, attempt = (tonumber(atm) or 0) + 1})
  return begin_step(rk, d.superstep, d.task, now, maxlen, start, cached, fresh)
end
`;

/** A step job's options (BullMQ's JobsOptions names): its deterministic id, its attempts, agentq's backoff, its priority if any. */
const STEP_JOB_OPTS = `
local function step_job_opts(job, priority)
  local opts = {jobId = job[1], attempts = job[4], backoff = {type = 'agentq'}}
  if priority > 0 then opts.priority = priority end
  return opts
end
`;

/**
 * One step's transition: fence + commit (COMMIT), the next superstep's jobs with their deterministic ids
 * (BullMQ's Queue.add: bullmq_add_job), finishing the current job (BullMQ's moveToFinished, which may fetch
 * the next job of the queue) and BEGIN of the job handed out — in one script, so "committed but not handed
 * on" cannot happen. Eager dispatch: a single next task may go straight to this worker as an active job
 * (its own id, attempts, lock and Bull Board row), instead of through the wait list; in the common case
 * by the lean hop (bullmq_lean_hop: about half the calls of BullMQ's scripts and none of their msgpack).
 *
 * KEYS: 1 the committing run's meta key (the script builds the run's other keys and the shard queue's)
 * ARGV: COMMIT's arguments (run-scripts.ts), then at t (after COMMIT's messages):
 *   t current job id ('' = none to finish: a parallel superstep's advance) · t+1 lock token · t+2 fetch next
 *   ('1'|'0') · t+3 eager ('1'|'0') · t+4 queue key prefix · t+5 lock duration ms · t+6 completed jobs to keep
 *   (-1 all) · t+7 the current job's attempts · t+8 worker name ('' none) · t+9 run key prefix of the shard
 *   · t+10 next jobs JSON [[id, name, data JSON, attempts], …] · t+11 the finished job's return value (JSON)
 *   · t+12 the run's BullMQ priority (0 none: the wait list; > 0 the prioritized set, 1 most urgent)
 *   · t+13 the current job's attempts made (its atm) · t+14 inline steps c (0 none) · then c blocks, each: its
 *   length L · step-start data JSON · the events its node emitted, JSON [[type, data JSON], …] · L-2 COMMIT arguments
 * → {the last COMMIT's reply, moveToFinished's code (0 or < 0; 0 when no job), the job handed out as BullMQ's
 *   [fields, id, rate-limit delay, delay until] or nil, its BEGIN reply or nil, 1 when it came eagerly,
 *   inline steps committed}; after a lean hop {the last COMMIT's reply, code, nil, nil, 2, inline steps
 *   committed, the run's {inputTokens, outputTokens, costUsd}}: the worker makes the job it handed out (its
 *   one next job) and its BEGIN from its own request (worker/engine/step-transitions.ts)
 */
export const STEP_TRANSITION = `${RUN_STEP_FUNCTIONS}${bullmqLua(['addJob', 'completeJob', 'jobData', 'leanHop', 'takeIfNext'])}${DELIVER}${STEP_JOB_OPTS}
local t = 18 + 2 * tonumber(ARGV[17])
t = t + tonumber(ARGV[t]) + 1
local job_id, token, prefix, now, maxlen = ARGV[t], ARGV[t + 1], ARGV[t + 4], ARGV[4], ARGV[5]
local lock_ms, worker_name = tonumber(ARGV[t + 5]), ARGV[t + 8]
-- The run's and the shard queue's keys, built here from KEYS[1] (the run's meta key) and the queue
-- prefix: one declared key instead of 22 (a third of the request's bytes). Redis Cluster allows
-- undeclared keys of the declared key's slot, and every one of these carries the shard's hash tag.
local base = string.sub(KEYS[1], 1, #KEYS[1] - 5)
local rk = ${RUN_KEYS_LUA}
local q = bullmq_queue_keys(prefix, job_id)

local committed = commit_step(rk, ARGV)
-- Inline steps (nodes marked inline: true, run by this job after its own): each committed in turn, fenced
-- like any step, with its step-start event; the run's next jobs are those after the last one.
local inline_at = t + 14
local at, inlined = inline_at + 1, 0
for _ = 1, tonumber(ARGV[inline_at] or '0') do
  if committed[1] ~= 'advanced' then break end
  local len = tonumber(ARGV[at])
  run_event(rk, maxlen, 'step-start', ARGV[at + 1])
  for _, emitted in ipairs(cjson.decode(ARGV[at + 2])) do run_event(rk, maxlen, emitted[1], emitted[2]) end
  committed = commit_step(rk, {unpack(ARGV, at + 3, at + len)})
  inlined = inlined + 1
  at = at + len + 1
end
local eager = false
-- The lean hop: the common case, one next task of a run without a priority handed back to this worker,
-- whose own job is still locked by it; whatever else goes BullMQ's own way below.
-- lean: the events maxlen once it hopped (false: it did not); hopped: the job it handed out.
local lean, hopped = false, false
if committed[1] == 'advanced' then
  local jobs = cjson.decode(ARGV[t + 10])
  local priority = tonumber(ARGV[t + 12])
  if #jobs == 1 and priority == 0 and ARGV[t + 3] == '1' and job_id ~= '' then
    local job = jobs[1]
    lean = bullmq_lean_hop(q, job[1], job[2], job[3], step_job_opts(job, 0), token, now, lock_ms, worker_name)
    if lean then hopped = job end
  end
  if not lean then
    for _, job in ipairs(jobs) do
      bullmq_add_job(q, job[1], job[2], job[3], step_job_opts(job, priority), now)
    end
    -- Eager dispatch: only when the job was just added (not a duplicate of a job that existed) and is the
    -- one BullMQ would hand out next. The run's next step may go ahead of jobs of its own urgency (the hop
    -- limit bounds that), never of more urgent ones.
    if #jobs == 1 and ARGV[t + 3] == '1' and job_id ~= '' then
      eager = bullmq_take_if_next(q, jobs[1][1], priority, token, lock_ms, now, worker_name)
    end
  end
end

local code = 0
local fetched = false
if lean then
  code = bullmq_lean_finish(q, job_id, now, lean, tonumber(ARGV[t + 6]), ARGV[t + 11], tonumber(ARGV[t + 13]))
  -- The job the lean hop handed back is the one the worker described in its request (ARGV[t + 10]), at the
  -- cursor its commit just set: the worker makes it and its BEGIN itself (step-transitions.ts), so the
  -- reply carries only what the worker cannot know, the run's usage as Redis now holds it. Its step
  -- starts here, as BEGIN would start it (a running run, a step no attempt began before).
  run_event(rk, maxlen, 'step-start', '{"node":' .. cjson.encode(hopped[2]) .. ',"superstep":' .. (tonumber(ARGV[1]) + 1 + inlined) .. ',"task":0,"attempt":1}')
  return {committed, code, false, false, 2, inlined, committed_usage}
elseif job_id ~= '' then
  local fetch = (ARGV[t + 2] == '1' and not eager) and '1' or '0'
  local finished = bullmq_complete_job(q, job_id, now, ARGV[t + 11], fetch, token, tonumber(ARGV[t + 6]), lock_ms,
    tonumber(ARGV[t + 7]), worker_name)
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
 * KEYS: moveToActive's queue keys (the seam's moveToActiveKeys; the script names them from ARGV[1])
 * ARGV: 1 queue key prefix · 2 now · 3 lock token · 4 lock duration ms · 5 worker name ('' none)
 *   · 6 run key prefix of the shard · 7 events maxlen · 8 jobs wanted
 * → a list of {moveToActive's [fields, id, rate-limit delay, delay until], BEGIN reply or false, lock token}
 */
export const STEP_TAKE = `${RUN_STEP_FUNCTIONS}${bullmqLua(['takeJob', 'jobData'])}${DELIVER}
local q = bullmq_queue_keys(ARGV[1])
local out = {}
for i = 1, tonumber(ARGV[8]) do
  local token = i == 1 and ARGV[3] or ARGV[3] .. '.' .. i
  local taken = bullmq_take_job(q, ARGV[2], token, tonumber(ARGV[4]), ARGV[5])
  local begun = false
  if type(taken[1]) == 'table' then begun = deliver(taken, ARGV[2], ARGV[7], ARGV[6], '', false) end
  out[i] = {taken, begun, token}
  if type(taken[1]) ~= 'table' then break end
end
return out
`;

/**
 * A producer's enqueue in one script: creates the run (as CREATE_RUN) and adds its start job to the
 * run's shard queue (BullMQ's Queue.add: bullmq_add_job); a run that exists but was never taken in gets its
 * start job again (the deterministic id dedupes it). One round trip, and no BullMQ Job built in the producer.
 * KEYS: 1-7 the run's keys · then the queue keys an add touches (the seam's addJobKeys; the script names
 *   them from ARGV[1])
 * ARGV: 1 queue key prefix · 2 start job id · 3 job name · 4 job data JSON · 5 attempts · 6 now · 7 BullMQ
 *   priority (0 none) · then the meta hash's field/value pairs
 * → 1 created, or the existing run's meta pairs
 */
export const CREATE_RUN_AND_START = `${bullmqLua(['addJob'])}
local function add_start(priority)
  local opts = {jobId = ARGV[2], attempts = tonumber(ARGV[5]), backoff = {type = 'agentq'}}
  if priority > 0 then opts.priority = priority end
  bullmq_add_job(bullmq_queue_keys(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], opts, ARGV[6])
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
