--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_queued, bullmq_head_priority, bullmq_shift_priorities.
  No KEYS or ARGV of its own: each takes a queue's named keys (bullmq_queue_keys).

  What the fair queue (shared/store/lua/fair-pass.lua) reads and rewrites of BullMQ's prioritized set,
  whose score is priority * 2^32 + a counter (BullMQ's getPriorityScore) and whose jobs keep their
  priority in their hash's `priority` field too (what a retry or a stalled job goes back with).
]]
-- Whether any job waits to be taken: in the wait list (no priority) or in the prioritized set.
local function bullmq_queued(q)
  return redis.call('LLEN', q.wait) > 0 or redis.call('ZCARD', q.prioritized) > 0
end
-- The priority of the most urgent prioritized job (the next BullMQ hands out after the wait list), or nil.
local function bullmq_head_priority(q)
  local head = redis.call('ZRANGE', q.prioritized, 0, 0, 'WITHSCORES')
  if head[2] == nil then return nil end
  return math.floor(tonumber(head[2]) / 0x100000000)
end
-- Every prioritized job's priority lowered by `by` (at least 1), each keeping its place in its counter's
-- order; → how many. Scores stay below 2^53 (priority at most 2^21), exact in Lua's doubles.
local function bullmq_shift_priorities(q, by)
  local jobs = redis.call('ZRANGE', q.prioritized, 0, -1, 'WITHSCORES')
  for i = 1, #jobs, 2 do
    local score = tonumber(jobs[i + 1])
    local priority = math.floor(score / 0x100000000)
    local lowered = math.max(1, priority - by)
    redis.call('ZADD', q.prioritized, lowered * 0x100000000 + (score - priority * 0x100000000), jobs[i])
    redis.call('HSET', q.prefix .. jobs[i], 'priority', lowered)
  end
  return #jobs / 2
end
