--[[
  Answer a waiting run: the interrupted step runs again and its `interrupt()` returns the value.
  ARGV: 1 now · 2 events maxlen · 3 value JSON
  → {'ok', superstep} | {'missing'} | {'not-waiting', status}

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua

local m = redis.call('HMGET', KEYS[1], 'status', 'superstep', 'interrupt')
if not m[1] then return {'missing'} end
if m[1] ~= 'waiting' then return {'not-waiting', m[1]} end
local pending = cjson.decode(m[3])
redis.call('HSET', KEYS[1], 'status', 'running', 'resume', '{"stepId":' .. cjson.encode(pending['stepId']) .. ',"value":' .. ARGV[3] .. '}', 'updatedAt', ARGV[1])
redis.call('HDEL', KEYS[1], 'interrupt')
-- The interrupt's bytes go, the answer's come (the resume field is replaced by the next one).
charge(KEYS, #ARGV[3] - #m[3])
event(ARGV[2], 'run-resume', '{"stepId":' .. cjson.encode(pending['stepId']) .. '}')
return {'ok', m[2]}
