--[[
  Compare-and-delete: only the owner releases its lease.

  Input:
    KEYS[1] the lease

    ARGV[1] owner

  Output:
    1 released, 0 not the owner's
]]
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
