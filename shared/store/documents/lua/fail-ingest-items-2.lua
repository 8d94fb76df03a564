--[[
  Fail the items of a hand-in that broke off, each once (HSETNX: an item finished meanwhile keeps its
  result and is not counted twice).

  Input:
    KEYS[1] batch
    KEYS[2] batch results

    ARGV[1] error message
    ARGV[2] now (ISO)
    ARGV[3] ttl (s)
    ARGV[4..] item/result-JSON pairs

  Output:
    the items failed
]]
local failed = 0
for i = 4, #ARGV, 2 do
  failed = failed + redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('HINCRBY', KEYS[1], 'failed', failed)
redis.call('HSET', KEYS[1], 'error', ARGV[1], 'updatedAt', ARGV[2])
return failed
