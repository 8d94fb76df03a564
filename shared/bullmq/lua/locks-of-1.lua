--[[
  The locks of a queue's active jobs whose token starts with a worker id prefix (BullMQ's tokens start
  with their worker's id), deleted too on request (worker-locks.lua).

  Input:
    KEYS[1] the active list

    ARGV[1] the job key prefix (queueLockScope)
    ARGV[2] the token prefix
    ARGV[3] 'del' deletes them too

  Output:
    [job id, token, …]
]]
--@include ./worker-locks.lua
return worker_locks(KEYS[1], ARGV[1], ARGV[2], ARGV[3] == 'del')
