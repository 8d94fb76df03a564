--[[
  End a claim without a result (the call failed or was abandoned), if it is still the claimant's. KEYS: 1 memo hash · ARGV: 1 claim field · 2 claimant

  KEYS[1] memo hash
  
  ARGV[1] claim field
  ARGV[2] claimant
]]
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and cjson.decode(held).owner == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) return 1 end
return 0
