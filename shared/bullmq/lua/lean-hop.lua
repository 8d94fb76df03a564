--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_lean_hop, bullmq_lean_finish. No KEYS or ARGV of its own: it takes a queue's
  named keys (bullmq_queue_keys).

  The lean hop: a job added straight to the active list, locked, as BullMQ's addStandardJob +
  moveToActive leave a step job (job hash, lists, lock, events), and the finish of the job that committed
  as moveToFinished leaves it, without what a step job never has (a parent, children, deduplication,
  metrics, a rate limiter). test/unit/bullmq-functions.test.ts checks that the lines copied here are still
  BullMQ's; test/integration/lean-hop.test.ts compares what they leave with what BullMQ's scripts leave.
]]
-- → the events maxlen once the job is added active (for bullmq_lean_finish), or false when the hop must go
-- BullMQ's way: a paused or limited queue, a job id that exists, or a current job (q.job) whose lock is
-- no longer token's (moveToFinished then reports the right code).
local function bullmq_lean_hop(q, id, name, data, opts, token, now, lock_ms, worker_name)
  local m = redis.call('HMGET', q.meta, 'paused', 'concurrency', 'max', 'opts.maxLenEvents')
  if m[1] or m[2] or m[3] then return false end
  if redis.call('GET', q.job .. ':lock') ~= token then return false end
  local job_key = q.prefix .. id
  if redis.call('EXISTS', job_key) == 1 then return false end
  local max_events = m[4]
  if not max_events then
    max_events = '10000'
    redis.call('HSET', q.meta, 'opts.maxLenEvents', max_events)
  end
  -- addStandardJob's storeJob (opts as its cjson.encode would write them, in another key order), then
  -- prepareJobForProcessing's processedOn, pb and ats.
  local fields = {'name', name, 'data', data, 'opts', '{"jobId":' .. cjson.encode(id) .. ',"attempts":' .. opts.attempts .. ',"backoff":' .. cjson.encode(opts.backoff) .. '}',
    'timestamp', now, 'delay', '0', 'priority', '0', 'processedOn', now}
  if worker_name ~= '' then
    fields[#fields + 1] = 'pb'
    fields[#fields + 1] = worker_name
  end
  fields[#fields + 1] = 'ats'
  fields[#fields + 1] = '1'
  redis.call('HSET', job_key, unpack(fields))
  redis.call('XADD', q.events, '*', 'event', 'added', 'jobId', id, 'name', name)
  redis.call('LPUSH', q.active, id)
  redis.call('SET', job_key .. ':lock', token, 'PX', lock_ms)
  -- 'eager' marks the hand-over in the queue's event stream (QueueEvents passes it on as args.eager).
  redis.call('XADD', q.events, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting', 'eager', '1')
  return max_events
end

-- moveToFinished of a completed job (q.job) whose lock bullmq_lean_hop saw token hold. keep: completed
-- jobs to keep (-1 all, 0 none). attempts_made: the job's attempts made before this one (its hash's atm,
-- which nothing changes while the lock is held): moveToFinished's HINCRBY of atm, folded into the HSET of
-- the kept job (one call fewer; a job not kept is deleted, atm and all). Deleting a job, only the keys a
-- step job can have: its hash and its logs — moveToFinished also deletes a parent's dependencies,
-- processed, failed and unsuccessful children, and step jobs have no children (four key lookups and ~300
-- bytes of AOF per step fewer). → 0, or -3 (not in the active list) as moveToFinished.
local function bullmq_lean_finish(q, job_id, now, max_events, keep, returnvalue, attempts_made)
  local job_key = q.job
  redis.call('DEL', job_key .. ':lock')
  redis.call('SREM', q.stalled, job_id)
  if redis.call('LREM', q.active, -1, job_id) < 1 then return -3 end
  if keep == 0 then
    redis.call('DEL', job_key, job_key .. ':logs')
  else
    redis.call('ZADD', q.completed, now, job_id)
    redis.call('HSET', job_key, 'returnvalue', returnvalue, 'finishedOn', now, 'atm', attempts_made + 1)
    if keep > 0 then
      local old = redis.call('ZREVRANGE', q.completed, keep, -1)
      if #old > 0 then
        for _, old_id in ipairs(old) do
          local old_key = q.prefix .. old_id
          redis.call('DEL', old_key, old_key .. ':logs')
        end
        redis.call('ZREMRANGEBYRANK', q.completed, 0, -(keep + 1))
      end
    end
  end
  -- moveToFinished trims the stream (XTRIM ~) before it emits; trimmed here by the same XADD (one call
  -- fewer): '~' trims whole nodes from the old end only, never the entries this script just added.
  redis.call('XADD', q.events, 'MAXLEN', '~', max_events, '*', 'event', 'completed', 'jobId', job_id, 'returnvalue', returnvalue, 'prev', 'active')
  return 0
end
