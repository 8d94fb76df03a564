--[[
  Add a run to its tenant's load set, counting the runs it held before.

  Input:
    KEYS[1] the tenant's load set

    ARGV[1] run id
    ARGV[2] now (ms)

  Output:
    how many runs the tenant held before this one
]]
local before = redis.call('ZCARD', KEYS[1])
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 0 then return before - 1 end
return before
