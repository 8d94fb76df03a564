--[[
  Saves a call's answer in its step's memo, where a live call's answer is saved (so it is paid for once), if the run is
  still at that step; the step's other saved results are kept as they are (appended to, never re-encoded).
  KEYS: 1 the run's memo hash · 2 its meta · 3 its writes
  ARGV: 1 step id (`s<k>.t<i>`) · 2 memo key · 3 the answer (JSON) · 4 superstep · 5 task
  → 'saved' | 'present' (saved before) | 'stale' (the run moved on or ended) | 'missing'

  KEYS[1..3] as listed above: the run's memo hash, meta, writes
]]
local m = redis.call('HMGET', KEYS[2], 'status', 'superstep')
if not m[1] then return 'missing' end
if m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or tonumber(m[2]) ~= tonumber(ARGV[4]) then return 'stale' end
if redis.call('HEXISTS', KEYS[3], ARGV[5]) == 1 then return 'stale' end
local entry = cjson.encode(ARGV[2]) .. ':' .. ARGV[3]
local saved = redis.call('HGET', KEYS[1], ARGV[1])
if not saved or string.match(saved, '^%s*{%s*}%s*$') then
  redis.call('HSET', KEYS[1], ARGV[1], '{' .. entry .. '}')
  return 'saved'
end
if cjson.decode(saved)[ARGV[2]] ~= nil then return 'present' end
redis.call('HSET', KEYS[1], ARGV[1], string.sub(saved, 1, -2) .. ',' .. entry .. '}')
return 'saved'
