--[[
  The last look before a claimed call is paid for (a paused worker sent calls 5-6 s after the
  step was committed elsewhere). Reads only, so it answers while Redis is full.
  KEYS: 1 memo hash · 2 meta · 3 writes · ARGV: 1 claim field · 2 claimant · 3 superstep · 4 task
  → 'ok' | 'stale' (committed, finished or moved on) | 'lost' (the claim is another's now, or gone)

  KEYS[1..3] as listed above: memo hash, meta, writes
]]
local m = redis.call('HMGET', KEYS[2], 'status', 'superstep')
if not m[1] or m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or tonumber(m[2]) ~= tonumber(ARGV[3]) then return 'stale' end
if redis.call('HEXISTS', KEYS[3], ARGV[4]) == 1 then return 'stale' end
local held = redis.call('HGET', KEYS[1], ARGV[1])
if not held or cjson.decode(held).owner ~= ARGV[2] then return 'lost' end
return 'ok'
