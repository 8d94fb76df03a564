--[[
  A producer's enqueue in one script: creates the run (as CREATE_RUN) and adds its start job to the
  run's shard queue (BullMQ's Queue.add: bullmq_add_job); a run that exists but was never taken in gets its
  start job again (the deterministic id dedupes it). One round trip, and no BullMQ Job built in the producer.
  With a lock token (a worker whose step just freed a batch's slot), a run created now has its start job
  taken at once by that worker when it is the one BullMQ would hand out next (bullmq_take_if_next: active,
  locked, marked eager): the worker runs it in the slot it holds, and a worker that dies first leaves it to
  BullMQ's stalled-job check like any job it held.
  KEYS: 1-7 the run's keys · then the queue keys an add touches (the seam's addJobKeys; the script names
    them from ARGV[1])
  ARGV: 1 queue key prefix · 2 start job id · 3 job name · 4 job data JSON · 5 attempts · 6 now · 7 BullMQ
    priority (0 none) · 8 the shard's fair hash ('' = weighted fairness off: the job gets that priority; the
    hash shares the queue's hash tag) · 9 tenant · 10 weight · 11 lock token to take the start job with ('' none)
    · 12 its lock duration ms · 13 worker name ('' none) · then the meta hash's field/value pairs (their bytes
    charged to the ledger its `ledger` field names)
  → 1 created, {1, the start job as takeJob's reply} created and taken, or the existing run's meta pairs

  KEYS[1..8] the run's keys (Keys.runAll)
  KEYS[9..19] the queue keys an add touches (addJobKeys)
  BULLMQ: the placeholder is the Lua of the BullMQ seam's helpers (bullmqLua)
]]
{{BULLMQ}}
--@include ./storage-functions.lua
--@include ./fair-pass.lua

local function add_start(priority)
  local q = bullmq_queue_keys(ARGV[1])
  -- Weighted fairness: the start job's priority from its tenant's pass (fair-pass.lua).
  if ARGV[8] ~= '' then priority = fair_priorities(ARGV[8], q, ARGV[9], tonumber(ARGV[10]), priority, 1)[1] end
  local opts = {jobId = ARGV[2], attempts = tonumber(ARGV[5]), backoff = {type = 'agentq'}}
  if priority > 0 then opts.priority = priority end
  bullmq_add_job(q, ARGV[2], ARGV[3], ARGV[4], opts, ARGV[6])
  return q, priority
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  local m = redis.call('HMGET', KEYS[1], 'status', 'tasks', 'priority')
  if m[1] == 'queued' and not m[2] then add_start(tonumber(m[3]) or 0) end
  return redis.call('HGETALL', KEYS[1])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 14))
charge(KEYS, bytes_of(ARGV, 14, #ARGV - 13))
local q, priority = add_start(tonumber(ARGV[7]))
if ARGV[11] == '' then return 1 end
local taken = bullmq_take_if_next(q, ARGV[2], priority, ARGV[11], tonumber(ARGV[12]), ARGV[6], ARGV[13])
return taken and {1, taken} or 1
