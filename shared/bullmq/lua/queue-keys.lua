--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_queue_keys(prefix, job_id), the named table of
  a queue's keys (`q.wait`, `q['metrics:completed']`, `q.job`: the job `job_id`'s key). No KEYS or ARGV
  of its own. The placeholder QUEUE_KEY_ENTRIES is one `['<name>'] = prefix .. '<name>'` per key name
  BullMQ's scripts use (bullmq-keys.ts).
]]
local function bullmq_queue_keys(prefix, job_id)
  return {prefix = prefix, job = prefix .. (job_id or ''), ['metrics:completed'] = prefix .. 'metrics:completed',
    {{QUEUE_KEY_ENTRIES}}}
end
