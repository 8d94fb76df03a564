--[[
  A dead process's jobs of one queue, back to wait at once: the locks of the queue's active jobs whose
  token starts with ARGV[5] (the dead process's worker id prefix) are deleted (worker-locks.lua), their
  ids added to the stalled set, and BullMQ's own stalled check (its script moveStalledJobsToWait, put in
  below as a function) run now rather than at a worker's next pass. It does what that pass would: each
  job it finds stalled goes back to wait, its stall counted (one stalled more than the limit is marked to
  fail when next taken), and the active jobs are marked for the next pass. It moves only a job without
  its lock, which a live worker's job always has.

  Input:
    KEYS[1] 'stalled' (the stalled set)
    KEYS[2] 'wait'
    KEYS[3] 'active'
    KEYS[4] 'stalled-check' (deleted: the check runs now whatever the interval)
    KEYS[5] 'meta'
    KEYS[6] 'paused'
    KEYS[7] 'marker'
    KEYS[8] 'events'
    KEYS[9] 'repeat'

    ARGV[1] the queue's workers' maxStalledCount
    ARGV[2] the job key prefix (`<prefix>:<queue>:`)
    ARGV[3] now (ms)
    ARGV[4] the stalled check's interval (ms): how long the workers' own checks then wait
    ARGV[5] the token prefix

  Output:
    [job id, token, …] of the locks deleted
]]
{{BULLMQ_FUNCTIONS}}
--@include ./worker-locks.lua
local released = worker_locks(KEYS[3], ARGV[2], ARGV[5], true)
for i = 1, #released, 2 do redis.call('SADD', KEYS[1], released[i]) end
if #released > 0 then
  redis.call('DEL', KEYS[4])
  bull_moveStalledJobsToWait(KEYS, {ARGV[1], ARGV[2], ARGV[3], ARGV[4]})
end
return released
