--[[
  Release the collector's lease if this worker still holds it.

  Input:
    KEYS[1] the lease

    ARGV[1] holder

  Output:
    1 released, 0 not held
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
