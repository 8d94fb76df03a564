--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_complete_job. No KEYS or ARGV of its own: it takes a queue's
  named keys (bullmq_queue_keys).

  Completing a job a worker holds (BullMQ's moveToFinished, target completed), keeping keep completed
  jobs (-1 all), and with fetch '1' taking the next job of the queue. → 0 or the next job as takeJob's
  reply, or BullMQ's negative code (-2 missing, -3 not active, -6 lock lost, …).
  The KEYS tables of BullMQ's scripts it calls come from bullmq-keys.ts (keysTableLua).
]]
local function bullmq_complete_job(q, job_id, now, returnvalue, fetch, token, keep, lock_ms, attempts, worker_name)
  local opts = cmsgpack.pack({token = token, keepJobs = {count = keep}, lockDuration = lock_ms, attempts = attempts,
    maxMetricsSize = '', name = worker_name ~= '' and worker_name or nil})
  return bull_moveToFinished({{KEYS_moveToFinished}}, {job_id, now, 'returnvalue', returnvalue, 'completed', fetch, q.prefix, opts})
end
