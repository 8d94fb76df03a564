--[[
  The locks of a queue's active jobs whose token starts with a worker id prefix (BullMQ's tokens start
  with their worker's id), deleted too on request. The placeholder JOB_LOCK_SUFFIX is BullMQ's lock key
  suffix (bullmq-jobs.ts).

  Input:
    KEYS[1] the active list

    ARGV[1] the job key prefix (queueLockScope)
    ARGV[2] the token prefix
    ARGV[3] 'del' deletes them too

  Output:
    [job id, token, …]
]]
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local lock = ARGV[1] .. id .. '{{JOB_LOCK_SUFFIX}}'
  local token = redis.call('GET', lock)
  if token and string.sub(token, 1, #ARGV[2]) == ARGV[2] then
    out[#out + 1] = id
    out[#out + 1] = token
    if ARGV[3] == 'del' then redis.call('DEL', lock) end
  end
end
return out
