--[[
  Compare-and-renew: only the owner extends its lease.

  Input:
    KEYS[1] the lease

    ARGV[1] owner
    ARGV[2] lease (ms)

  Output:
    1 renewed, 0 not the owner's
]]
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
