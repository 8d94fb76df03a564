--[[
  Release a job's lock if it still holds the token (what BullMQ's releaseLock does).

  Input:
    KEYS[1] the job's lock

    ARGV[1] token

  Output:
    1 released, 0 not
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
