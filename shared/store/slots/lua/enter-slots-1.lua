--[[
  A run asks for one of a key's slots (KeyedSlots). The key's members are its unfinished runs: those that
  hold a slot score their place minus HELD (so they sort first, whatever their times), those waiting score
  their creation time. Two ways to ask:
   - 'wait': the run joins the line (unless in it) at its creation time; while slots are free the first
     waiting runs take them, in order. → whether it holds one.
   - 'reserve': the run takes a free slot or nothing (no line), scored with Redis's time so a sweep in
     another process judges its age by the same clock. Every member of such a key holds a slot.

  Input:
    KEYS[1] the key's members (a sorted set)

    ARGV[1] run id
    ARGV[2] its creation time (ms; 'wait' only)
    ARGV[3] ttl (s; 0 keeps the key's own)
    ARGV[4] limit (slots)
    ARGV[5] 'wait' | 'reserve'
    ARGV[6] at most how many members ahead to return ('wait')

  Output:
    'wait':    {1} the run holds a slot · {0, ahead...} it waits, behind these members (holders first)
    'reserve': {2} held already · {1} reserved now · {0} full
]]
local HELD = 1e15
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
local score = redis.call('ZSCORE', key, id)
if ttl > 0 then redis.call('EXPIRE', key, ttl) end
if score and tonumber(score) < 0 then return {1} end
if not score then redis.call('ZADD', key, ARGV[2], id) end
-- Free slots go to the first runs waiting (more than one when a run raised the key's limit).
local held = redis.call('ZCOUNT', key, '-inf', '(0')
while held < limit do
  local first = redis.call('ZRANGEBYSCORE', key, 0, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if not first[1] then break end
  redis.call('ZADD', key, string.format('%.0f', tonumber(first[2]) - HELD), first[1])
  held = held + 1
  if first[1] == id then return {1} end
end
local rank = redis.call('ZRANK', key, id)
local shown = math.min(rank, tonumber(ARGV[6]))
if shown < 1 then return {0} end
local reply = redis.call('ZRANGE', key, 0, shown - 1)
table.insert(reply, 1, 0)
return reply
