--[[
  A run asks for one of a key's slots (KeyedSlots): the key's members are its unfinished runs in order,
  and the first `limit` of them hold the slots. Two ways to ask:
   - 'wait': the run joins the line (at its creation time, or behind the last member when that is later,
     so a run that joins late never pushes one that may be running out of the slots) and learns whether
     it holds a slot now; it is handed one when a holder leaves (leave-slots-1.lua).
   - 'reserve': the run takes a free slot or nothing (no line), stamped with Redis's time so a sweep in
     another process judges its age by the same clock.

  Input:
    KEYS[1] the key's members (a sorted set)

    ARGV[1] run id
    ARGV[2] its creation time (ms; 'wait' only)
    ARGV[3] ttl (s; 0 keeps the key's own)
    ARGV[4] limit (slots)
    ARGV[5] 'wait' | 'reserve'
    ARGV[6] at most how many members ahead to return ('wait')

  Output:
    'wait':    {1} the run holds a slot · {0, ahead...} it waits, behind these members (first first)
    'reserve': {2} held already · {1} reserved now · {0} full
]]
local key, id, limit = KEYS[1], ARGV[1], tonumber(ARGV[4])
local ttl = tonumber(ARGV[3])
if ARGV[5] == 'reserve' then
  if redis.call('ZSCORE', key, id) then return {2} end
  if redis.call('ZCARD', key) >= limit then return {0} end
  local time = redis.call('TIME')
  redis.call('ZADD', key, tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000), id)
  if ttl > 0 then redis.call('EXPIRE', key, ttl) end
  return {1}
end
if not redis.call('ZSCORE', key, id) then
  local score = tonumber(ARGV[2])
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] and tonumber(last[2]) > score then score = tonumber(last[2]) end
  redis.call('ZADD', key, score, id)
end
if ttl > 0 then redis.call('EXPIRE', key, ttl) end
local rank = redis.call('ZRANK', key, id)
if rank < limit then return {1} end
local shown = math.min(rank, tonumber(ARGV[6]))
if shown < 1 then return {0} end
local reply = redis.call('ZRANGE', key, 0, shown - 1)
table.insert(reply, 1, 0)
return reply
