--[[
  A follower of a run starts (or keeps) its token log: the log is made with a marker entry when it
  does not exist, and its expiry renewed once half of it has passed, so tokens are kept from now on.

  Input:
    KEYS[1] the run's token log

    ARGV[1] the log's expiry (ms)

  Output:
    { the log's last id (tokens after it are the follower's), 1 when the log existed before, else 0 }
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  local id = redis.call('XADD', KEYS[1], '*', 'w', '1')
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return { id, 0 }
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) / 2 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1][1], 1 }
