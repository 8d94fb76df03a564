--[[
  A step's call asks to go in a provider batch. A call seen before answers its state; an error or a
  live verdict is handed over once (the step acts on it; its retry is another attempt, another call).
  KEYS: 1 calls · 2 pending · 3 bodies · 4 the batch's meta
  ARGV: 1 custom id · 2 the request line (JSONL) · 3 model
  A call is parked at Redis's time (TIME): the collector, on another machine, judges its age by the same clock.
  → {state, call JSON} | {'pending', ''} registered now | {'closed', status}: the batch is not running

  KEYS[1..4] as listed above: calls, pending, bodies, the batch's meta
]]
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then
  local call = cjson.decode(held)
  if call.s == 'error' or call.s == 'live' then
    redis.call('HDEL', KEYS[1], ARGV[1])
    redis.call('HDEL', KEYS[3], ARGV[1])
  end
  return {call.s, held}
end
local status = redis.call('HGET', KEYS[4], 'status')
if status ~= 'running' then return {'closed', status or 'missing'} end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({s = 'pending', m = ARGV[3], at = now}))
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[1])
return {'pending', ''}
