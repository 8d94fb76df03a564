--[[
  A step's `waitFor`: its outcome if it has one; else an event the run was sent before the wait (its
  inbox), taken now; else, past its end, a timeout; else the wait is opened (or kept open) for senders.
  KEYS[1] the run's meta
  KEYS[2] its waits hash
  KEYS[3] its inbox (zset: event JSON → expiry ms)
  ARGV: 1 wait id · 2 the wait's record JSON {name, match, key, until} · 3 now (ms)
        · 4 how long to keep the hash at least (ms)
  → {'done', outcome JSON} · {'waiting'} · {'missing'}
]]
--@include ./wait-functions.lua

local done = redis.call('HGET', KEYS[2], 'd:' .. ARGV[1])
if done then return {'done', done} end
if not redis.call('HGET', KEYS[1], 'status') then return {'missing'} end
local now = tonumber(ARGV[3])
local record = cjson.decode(ARGV[2])
-- Events sent to the run before it waited, oldest first; the expired ones go.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. now)
if record.key == nil or record.key == cjson.null then
  for _, raw in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    local event = cjson.decode(raw)
    if redis.call('HEXISTS', KEYS[2], 'e:' .. event.id) == 0 and fits(record, event, now) then
      local outcome = '{"event":' .. raw .. '}'
      settle(KEYS[2], ARGV[1], outcome, event.id)
      redis.call('ZREM', KEYS[3], raw)
      return {'done', outcome}
    end
  end
end
if record['until'] and record['until'] ~= cjson.null and now >= tonumber(record['until']) then
  local outcome = '{"timedOut":true}'
  settle(KEYS[2], ARGV[1], outcome, '')
  return {'done', outcome}
end
redis.call('HSET', KEYS[2], 'w:' .. ARGV[1], ARGV[2])
keep(KEYS[2], tonumber(ARGV[4]))
return {'waiting'}
