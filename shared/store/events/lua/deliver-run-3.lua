--[[
  Delivers an event to one run: to the wait named (an event sent to a correlation key names each
  waiting step), else to the first open wait of the run that takes it; with none, an event sent to
  the run itself is kept in its inbox until it expires, for a wait to come. The outcome is recorded
  here, once: the woken step reads it (watch-run-3.lua), and a second delivery of the event is refused.
  KEYS[1] the run's meta
  KEYS[2] its waits hash
  KEYS[3] its inbox (zset: event JSON → expiry ms)
  ARGV: 1 event JSON {id, name, data, sentAt, key?} · 2 now (ms) · 3 the wait id named, or ''
        · 4 the event's expiry (ms; '' keeps nothing in the inbox) · 5 how long to keep the hash at least (ms)
  → {'delivered', wait id} · {'stored'} · {'none'} · {'taken'} (this run had it already)
    · {'closed'} (the run is over, or the wait named is not open) · {'missing'}
]]
--@include ./wait-functions.lua

local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing'} end
if closed(status) then return {'closed'} end
local event = cjson.decode(ARGV[1])
if redis.call('HEXISTS', KEYS[2], 'e:' .. event.id) == 1 then return {'taken'} end
local now = tonumber(ARGV[2])
local outcome = '{"event":' .. ARGV[1] .. '}'
if ARGV[3] ~= '' then
  local held = redis.call('HGET', KEYS[2], 'w:' .. ARGV[3])
  if held and fits(cjson.decode(held), event, now) then
    settle(KEYS[2], ARGV[3], outcome, event.id)
    return {'delivered', ARGV[3]}
  end
  return {'closed'}
end
local fields = redis.call('HGETALL', KEYS[2])
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 'w:' and fits(cjson.decode(fields[i + 1]), event, now) then
    local waitId = string.sub(fields[i], 3)
    settle(KEYS[2], waitId, outcome, event.id)
    return {'delivered', waitId}
  end
end
if ARGV[4] == '' then return {'none'} end
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
keep(KEYS[3], tonumber(ARGV[4]) - now)
keep(KEYS[2], tonumber(ARGV[5]))
return {'stored'}
