--[[
  One step's transition: fence + commit (COMMIT), the next superstep's jobs with their deterministic ids
  (BullMQ's Queue.add: bullmq_add_job), finishing the current job (BullMQ's moveToFinished, which may fetch
  the next job of the queue) and BEGIN of the job handed out — in one script, so "committed but not handed
  on" cannot happen. Eager dispatch: a single next task may go straight to this worker as an active job
  (its own id, attempts, lock and Bull Board row), instead of through the wait list; in the common case
  by the lean hop (bullmq_lean_hop: about half the calls of BullMQ's scripts and none of their msgpack).

  KEYS: 1 the committing run's meta key (the script builds the run's other keys and the shard queue's)
  ARGV: COMMIT's arguments (run-scripts.ts), then at t (after COMMIT's messages and its two usage arguments):
    t current job id ('' = none to finish: a parallel superstep's advance) · t+1 lock token · t+2 fetch next
    ('1'|'0') · t+3 eager ('1'|'0') · t+4 queue key prefix · t+5 lock duration ms · t+6 completed jobs to keep
    (-1 all) · t+7 the current job's attempts · t+8 worker name ('' none) · t+9 run key prefix of the shard
    · t+10 next jobs JSON [[id, name, data JSON, attempts], …] · t+11 the finished job's return value (JSON)
    · t+12 the run's BullMQ priority (0 none: the wait list; > 0 the prioritized set, 1 most urgent)
    · t+13 the current job's attempts made (its atm) · t+14 the shard's fair hash ('' = weighted fairness
    off: the jobs get the run's priority) · t+15 the run's tenant · t+16 its weight · t+17 inline steps c (0
    none) · then c blocks, each: its length L · step-start data JSON · the events its node emitted, JSON
    [[type, data JSON], …] · L-2 COMMIT arguments
  → {the last COMMIT's reply, moveToFinished's code (0 or < 0; 0 when no job), the job handed out as BullMQ's
    [fields, id, rate-limit delay, delay until] or nil, its BEGIN reply or nil, 1 when it came eagerly,
    inline steps committed}; after a lean hop {the last COMMIT's reply, code, nil, nil, 2, inline steps
    committed, the run's {inputTokens, outputTokens, costUsd}}: the worker makes the job it handed out (its
    one next job) and its BEGIN from its own request (worker/engine/step-transitions.ts)

  KEYS[1] the committing run's meta key
  BULLMQ: the placeholder is the Lua of the BullMQ seam's helpers (bullmqLua)
]]
--@include ./run-step-functions.lua
{{BULLMQ}}
--@include ./deliver.lua
--@include ./step-job-opts.lua
--@include ./fair-pass.lua

local t = 18 + 2 * tonumber(ARGV[17])
t = t + tonumber(ARGV[t]) + 3
local job_id, token, prefix, now, maxlen = ARGV[t], ARGV[t + 1], ARGV[t + 4], ARGV[4], ARGV[5]
local lock_ms, worker_name = tonumber(ARGV[t + 5]), ARGV[t + 8]
-- The run's and the shard queue's keys, built here from KEYS[1] (the run's meta key) and the queue
-- prefix: one declared key instead of 22 (a third of the request's bytes). Redis Cluster allows
-- undeclared keys of the declared key's slot, and every one of these carries the shard's hash tag.
local base = string.sub(KEYS[1], 1, #KEYS[1] - 5)
local rk = {{RUN_KEYS}}
local q = bullmq_queue_keys(prefix, job_id)

-- The commit's bytes, its events' and its recording's charged as one at the end (flush_charges).
defer_charges()
local committed = commit_step(rk, ARGV)
-- Inline steps (nodes marked inline: true, run by this job after its own): each committed in turn, fenced
-- like any step, with its step-start event; the run's next jobs are those after the last one.
local inline_at = t + 17
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
  -- Weighted fairness: each job's priority from its tenant's pass, decided as it is added (fair-pass.lua).
  local priorities = {}
  if ARGV[t + 14] ~= '' then
    priorities = fair_priorities(ARGV[t + 14], q, ARGV[t + 15], tonumber(ARGV[t + 16]), priority, #jobs)
  else
    for i = 1, #jobs do priorities[i] = priority end
  end
  priority = priorities[1] or priority
  if #jobs == 1 and priority == 0 and ARGV[t + 3] == '1' and job_id ~= '' then
    local job = jobs[1]
    lean = bullmq_lean_hop(q, job[1], job[2], job[3], step_job_opts(job, 0), token, now, lock_ms, worker_name)
    if lean then hopped = job end
  end
  if not lean then
    for i, job in ipairs(jobs) do
      bullmq_add_job(q, job[1], job[2], job[3], step_job_opts(job, priorities[i]), now)
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
  flush_charges()
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
flush_charges()
return {committed, code, handed, begun, eager and 1 or 0, inlined}
