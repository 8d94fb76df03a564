--[[
  A run enters its conversation's turns. A turn not registered yet (a raw job's, or one whose
  registration a crash lost) joins at its creation time.

  Input:
    KEYS[1] the conversation's turns

    ARGV[1] run id
    ARGV[2] its createdAt
    ARGV[3] ttl (s)

  Output:
    the turns ahead of the run, first first (empty: it is the conversation's first unfinished turn)
]]
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if rank == 0 then return {} end
return redis.call('ZRANGE', KEYS[1], 0, rank - 1)
