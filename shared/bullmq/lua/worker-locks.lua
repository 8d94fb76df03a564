--[[
  Fragment, included with --@include: worker_locks(active, job_prefix, token_prefix, delete). No KEYS or
  ARGV of its own; the including script's luaScript call gives the placeholder JOB_LOCK_SUFFIX (BullMQ's
  lock key suffix, bullmq-jobs.ts).

  The locks of the jobs in the active list `active` whose token starts with `token_prefix` (BullMQ's
  tokens start with their worker's id): the locks one worker process holds in one queue. `job_prefix` is
  the job key prefix (`<prefix>:<queue>:`). With `delete`, each is deleted too.
  → {job id, token, …}
]]
local function worker_locks(active, job_prefix, token_prefix, delete)
  local out = {}
  for _, id in ipairs(redis.call('LRANGE', active, 0, -1)) do
    local lock = job_prefix .. id .. '{{JOB_LOCK_SUFFIX}}'
    local token = redis.call('GET', lock)
    if token and string.sub(token, 1, #token_prefix) == token_prefix then
      out[#out + 1] = id
      out[#out + 1] = token
      if delete then redis.call('DEL', lock) end
    end
  end
  return out
end
