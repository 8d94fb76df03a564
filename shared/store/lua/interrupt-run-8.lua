--[[
  A node asked for input: the run waits (no job in flight) until it is resumed or cancelled.
  ARGV: 1 superstep · 2 now · 3 events maxlen · 4 interrupt JSON {node, stepId, request} · 5 run-waiting data JSON
  → 'ok' | 'missing' | 'fenced'

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua

local m = redis.call('HMGET', KEYS[1], 'status', 'superstep')
if not m[1] then return 'missing' end
if m[1] ~= 'running' or tonumber(m[2]) ~= tonumber(ARGV[1]) then return 'fenced' end
redis.call('HSET', KEYS[1], 'status', 'waiting', 'interrupt', ARGV[4], 'updatedAt', ARGV[2])
charge(KEYS, #ARGV[4])
event(ARGV[3], 'run-waiting', ARGV[5])
return 'ok'
