--[[
  Answer a waiting run: the interrupted step runs again and its `interrupt()` returns the value.
  ARGV: 1 now · 2 events maxlen · 3 value JSON · 4 the step whose interrupt to answer ('' any: the API's
        resume; a step id: an interrupt's callback URL) · 5 how long to keep the waits hash at least (ms)
  → {'ok', superstep} | {'missing'} | {'not-waiting', status} | {'answered'} (step ARGV[4]'s interrupt was
    answered already: its callback URL is used)

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
  KEYS[9] the run's waits hash: an interrupt that handed out a callback URL is marked answered there
          (`d:<stepId>:i`), by whichever resume came first, so the URL is single-use against both
]]
--@include ./run-functions.lua

local m = redis.call('HMGET', KEYS[1], 'status', 'superstep', 'interrupt')
if not m[1] then return {'missing'} end
local pending = m[1] == 'waiting' and cjson.decode(m[3]) or nil
if ARGV[4] ~= '' and (not pending or pending['stepId'] ~= ARGV[4]) then
  if redis.call('HEXISTS', KEYS[9], 'd:' .. ARGV[4] .. ':i') == 1 then return {'answered'} end
  return {'not-waiting', m[1]}
end
if not pending then return {'not-waiting', m[1]} end
redis.call('HSET', KEYS[1], 'status', 'running', 'resume', '{"stepId":' .. cjson.encode(pending['stepId']) .. ',"value":' .. ARGV[3] .. '}', 'updatedAt', ARGV[1])
redis.call('HDEL', KEYS[1], 'interrupt')
if pending['callbackUrl'] then
  redis.call('HSET', KEYS[9], 'd:' .. pending['stepId'] .. ':i', '{"answeredAt":' .. ARGV[1] .. '}')
  local left = redis.call('PTTL', KEYS[9])
  if left < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[9], ARGV[5]) end
end
-- The interrupt's bytes go, the answer's come (the resume field is replaced by the next one).
charge(KEYS, #ARGV[3] - #m[3])
event(ARGV[2], 'run-resume', '{"stepId":' .. cjson.encode(pending['stepId']) .. '}')
return {'ok', m[2]}
