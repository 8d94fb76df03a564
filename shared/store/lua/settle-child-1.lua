--[[
  Counts the end of an awaited child run in its parent (the child's run-finished hook, or the parent's
  step finding the child ended). At most once per end: the `child-wait:<id>` field goes with the count.

  Input:
    KEYS[1] the parent run's memo hash

    ARGV[1] the child run id

  Output:
    {the waiting step's id, how many of its awaited children have not ended yet}; false when this end
    was counted already (or the child is not awaited, or the parent is gone)
]]
local field = 'child-wait:' .. ARGV[1]
local step = redis.call('HGET', KEYS[1], field)
if not step then return false end
redis.call('HDEL', KEYS[1], field)
return {step, redis.call('HINCRBY', KEYS[1], 'child-waits:' .. step, -1)}
