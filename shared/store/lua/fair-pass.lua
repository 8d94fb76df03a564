--[[
  Fragment, included with --@include: fair_priorities. FAIR_STRIDE, FAIR_REBASE_AT and MAX_PRIORITY are the
  numbers of shared/store/fair-queue.ts; it needs the BullMQ seam's priorities helpers (bullmqLua
  'priorities') and a queue's named keys. No KEYS or ARGV of its own.

  Weighted fairness between tenants, decided as a tenant's step jobs are added (stride scheduling, or
  start-time fair queueing, on BullMQ's priorities). The fair hash of the shard (its queue's hash tag)
  holds `v`, the virtual time, and `t:<tenant>`, each tenant's pass. A job starts at its tenant's pass,
  or at the virtual time if that is later (a tenant idle a while starts level with the others: it banks
  no credit), and moves the pass on by FAIR_STRIDE / weight; its priority is that start, plus the run's
  own priority in strides (the run's place within its tenant). The virtual time follows the queue: the
  most urgent waiting job's priority, never going back. Past FAIR_REBASE_AT everything moves down by the
  virtual time (waiting jobs, passes; idle tenants' passes dropped), to stay inside BullMQ's range.
  A queue with nothing waiting has no one to be fair to: a job without a priority of its own gets none
  (BullMQ's wait list, the lean hop), and no pass moves.
  → the priorities of `count` jobs of `tenant`, in order.
]]
local function fair_priorities(key, q, tenant, weight, own, count)
  local out = {}
  if own == 0 and not bullmq_queued(q) then
    for i = 1, count do out[i] = 0 end
    return out
  end
  local f = redis.call('HMGET', key, 'v', 't:' .. tenant)
  local v = tonumber(f[1]) or 0
  local pass = tonumber(f[2]) or 0
  local head = bullmq_head_priority(q)
  if head and head - 1 > v then v = head - 1 end
  if v >= {{FAIR_REBASE_AT}} then
    local by = math.floor(v)
    bullmq_shift_priorities(q, by)
    v, pass = v - by, pass - by
    local fields = redis.call('HGETALL', key)
    for i = 1, #fields, 2 do
      if fields[i] ~= 'v' then
        local moved = tonumber(fields[i + 1]) - by
        if moved > v then redis.call('HSET', key, fields[i], moved) else redis.call('HDEL', key, fields[i]) end
      end
    end
  end
  local start = math.max(pass, v)
  for i = 1, count do
    out[i] = math.min({{MAX_PRIORITY}}, 1 + math.floor(start) + own * {{FAIR_STRIDE}})
    start = start + {{FAIR_STRIDE}} / weight
  end
  redis.call('HSET', key, 'v', v, 't:' .. tenant, start)
  return out
end
