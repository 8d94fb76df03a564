--[[
  Fragment, included by bullmqLua (bullmq-lua.ts): bullmq_take_job. No KEYS or ARGV of its own: it takes a queue's
  named keys (bullmq_queue_keys).

  A worker's fetch (BullMQ's moveToActive), the job locked with token. → [job hash pairs, id, rate-limit delay, delay until]
  The KEYS tables of BullMQ's scripts it calls come from bullmq-keys.ts (keysTableLua).
]]
local function bullmq_take_job(q, now, token, lock_ms, worker_name)
  local opts = cmsgpack.pack({token = token, lockDuration = lock_ms, name = worker_name ~= '' and worker_name or nil})
  return bull_moveToActive({{KEYS_moveToActive}}, {q.prefix, now, opts})
end
