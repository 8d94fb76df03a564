--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_add_job. No KEYS or ARGV of its own: it takes a queue's
  named keys (bullmq_queue_keys).

  Queue.add of one job: BullMQ's addPrioritizedJob for a priority > 0, else addStandardJob. → the job id.
  The KEYS tables of BullMQ's scripts it calls come from bullmq-keys.ts (keysTableLua).
]]
local function bullmq_add_job(q, id, name, data, opts, now)
  local args = cmsgpack.pack({q.prefix, id, name, now})
  if opts.priority and opts.priority > 0 then
    return bull_addPrioritizedJob({{KEYS_addPrioritizedJob}}, {args, data, cmsgpack.pack(opts)})
  end
  return bull_addStandardJob({{KEYS_addStandardJob}}, {args, data, cmsgpack.pack(opts)})
end
