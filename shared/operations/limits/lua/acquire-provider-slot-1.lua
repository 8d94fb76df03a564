--[[
  Take a request slot if both the request and the token budget of the last window allow it. Members
  are `<ms>:<id>:<tokens>`; the window is exact (a log, not a bucket).

  Input:
    KEYS[1] the log

    ARGV[1] requests per window (0 = none)
    ARGV[2] tokens per window (0 = none)
    ARGV[3] tokens asked
    ARGV[4] id
    ARGV[5] window (ms)

  Output:
    {0, member} granted | {wait ms, ''} refused | {-1, ''} never (asked more tokens than the window allows)
]]
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local window = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local max_requests, max_tokens, asked = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local count = #entries / 2
local wait = 0
if max_requests > 0 and count >= max_requests then
  -- the oldest entries must leave the window first
  local leaving = count - max_requests + 1
  wait = math.max(wait, tonumber(entries[leaving * 2]) + window - now)
end
if max_tokens > 0 then
  local used = 0
  for i = 1, #entries, 2 do used = used + tonumber(string.match(entries[i], ':(%d+)$')) end
  if used + asked > max_tokens then
    if asked > max_tokens then return {-1, ''} end
    local freed = 0
    for i = 1, #entries, 2 do
      freed = freed + tonumber(string.match(entries[i], ':(%d+)$'))
      if used - freed + asked <= max_tokens then
        wait = math.max(wait, tonumber(entries[i + 1]) + window - now)
        break
      end
    end
  end
end
if wait > 0 then return {wait, ''} end
local member = now .. ':' .. ARGV[4] .. ':' .. asked
redis.call('ZADD', KEYS[1], now, member)
redis.call('PEXPIRE', KEYS[1], window * 2)
return {0, member}
