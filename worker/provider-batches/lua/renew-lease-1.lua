--[[
  Renews the collector's lease if this worker still holds it. KEYS: 1 lease · ARGV: 1 holder · 2 ms → 1 held, 0 not

  KEYS[1] lease
  
  ARGV[1] holder
  ARGV[2] lease (ms)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
