--[[
  One live model token (or token-reset) of a run: kept in the run's token log when that log exists
  (someone follows the run: watch-tokens-1.lua made it), then published on the run's channel, with
  its log id when it was kept. A run nobody follows writes nothing durable (PUBLISH is not in the AOF).
  Log ids keep the log's first id's milliseconds and count up by one (`<ms>-1`, `<ms>-2`, …), so a
  follower sees from the ids alone whether it missed an entry.

  Input:
    KEYS[1] the run's token log

    ARGV[1] the run's token channel (same hash tag)
    ARGV[2] the log's cap (XADD MAXLEN ~)
    ARGV[3] the log's expiry (ms), renewed once half of it has passed
    ARGV[4] the event as JSON without runId and id (what is published)
    ARGV[5] the run id
    ARGV[6] '1' on a Redis Cluster (sharded pub/sub: SPUBLISH), else '0'
    ARGV[7] what the log keeps of the event (its fields by position: fewer AOF bytes)

  Output:
    the token's log id, or false when it was not kept
]]
local id = false
local body = ',"runId":"' .. ARGV[5] .. '",' .. string.sub(ARGV[4], 2)
if redis.call('EXISTS', KEYS[1]) == 1 then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
  local epoch = last and string.match(last[1], '^(%d+)-') or '*'
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], epoch == '*' and '*' or epoch .. '-*', 'e', ARGV[7])
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) / 2 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
  body = '{"id":"' .. id .. '"' .. body
else
  body = '{' .. string.sub(body, 2)
end
redis.call(ARGV[6] == '1' and 'SPUBLISH' or 'PUBLISH', ARGV[1], body)
return id
