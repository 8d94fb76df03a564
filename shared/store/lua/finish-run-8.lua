--[[
  End a run that is not finished: failed or cancelled, the last committed context kept.
  ARGV: 1 superstep to fence on ('' = any) · 2 status · 3 error JSON · 4 now · 5 events maxlen · 6 retention s
    · 7 run-end data JSON · 8 only from this status ('' = any non-terminal)
  → 'ok' | 'missing' | 'terminal' | 'fenced'

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua

local m = redis.call('HMGET', KEYS[1], 'status', 'superstep')
if not m[1] then return 'missing' end
if terminal(m[1]) then return 'terminal' end
if ARGV[1] ~= '' and tonumber(m[2]) ~= tonumber(ARGV[1]) then return 'fenced' end
if ARGV[8] ~= '' and m[1] ~= ARGV[8] then return 'fenced' end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'error', ARGV[3], 'finishedAt', ARGV[4], 'updatedAt', ARGV[4])
charge(KEYS, #ARGV[3])
event(ARGV[5], 'run-end', ARGV[7])
expire_all(ARGV[6])
return 'ok'
