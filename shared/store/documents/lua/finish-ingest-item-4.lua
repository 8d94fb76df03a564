--[[
  Record one finished document of a batch, once: the result is written with HSETNX, so a job re-run
  after a crash counts nothing twice. The document record is updated only while the version this job
  indexed is still the latest one handed in (pendingHash).

  Input:
    KEYS[1] record
    KEYS[2] batch
    KEYS[3] batch results
    KEYS[4] collection index

    ARGV[1] item
    ARGV[2] result JSON
    ARGV[3] counter ('done' | 'failed')
    ARGV[4] content hash
    ARGV[5] now (ms)
    ARGV[6] ttl (s)
    ARGV[7] doc id
    ARGV[8..] record field/value pairs (none: leave the record alone)

  Output:
    1 when the record was updated, else 0
]]
local applied = 0
if #ARGV > 7 and redis.call('HGET', KEYS[1], 'pendingHash') == ARGV[4] then
  redis.call('HSET', KEYS[1], unpack(ARGV, 8))
  redis.call('ZADD', KEYS[4], ARGV[5], ARGV[7])
  applied = 1
end
if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
  redis.call('HSET', KEYS[2], 'updatedAt', ARGV[5])
  redis.call('EXPIRE', KEYS[3], ARGV[6])
end
return applied
