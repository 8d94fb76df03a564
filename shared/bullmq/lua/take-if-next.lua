--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_take_if_next. No KEYS or ARGV of its own: it takes a queue's
  named keys (bullmq_queue_keys).

  Eager dispatch of a job just added: taken (active, locked with token) when it is the one BullMQ would
  hand out next, on an unpaused queue with no global concurrency or rate limit. A prioritized job goes
  only while nothing waits without a priority (BullMQ takes those first) and no prioritized job is more
  urgent (the set's score is priority * 2^32 + a counter). → the job as takeJob's reply, or false.
]]
local function bullmq_take_if_next(q, id, priority, token, lock_ms, now, worker_name)
  local m = redis.call('HMGET', q.meta, 'paused', 'concurrency', 'max')
  local next_up
  if priority > 0 then
    local head = redis.call('ZRANGE', q.prioritized, 0, 0, 'WITHSCORES')
    next_up = head[1] ~= nil and math.floor(tonumber(head[2]) / 0x100000000) >= priority and redis.call('LLEN', q.wait) == 0
      and redis.call('ZSCORE', q.prioritized, id) ~= false
  else
    next_up = redis.call('LINDEX', q.wait, 0) == id
  end
  if m[1] or m[2] or m[3] or not next_up then return false end
  if priority > 0 then redis.call('ZREM', q.prioritized, id) else redis.call('LPOP', q.wait) end
  redis.call('LPUSH', q.active, id)
  -- What BullMQ's prepareJobForProcessing does for a queue without a rate limiter.
  local job_key = q.prefix .. id
  redis.call('SET', job_key .. ':lock', token, 'PX', lock_ms)
  -- 'eager' marks the hand-over in the queue's event stream (QueueEvents passes it on as args.eager).
  redis.call('XADD', q.events, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting', 'eager', '1')
  if worker_name ~= '' then redis.call('HSET', job_key, 'processedOn', now, 'pb', worker_name) else redis.call('HSET', job_key, 'processedOn', now) end
  redis.call('HINCRBY', job_key, 'ats', 1)
  return {redis.call('HGETALL', job_key), id, 0, 0}
end
