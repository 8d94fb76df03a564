--[[
  A run of the batch finished: its usage goes into the batch's totals in the meta (`u_in`, `u_cached`,
  `u_out`, `u_cost`, `u_uncached`). `usage` remembers what each run added, so a retried run that
  finishes again replaces its share instead of adding it twice.

  Input:
    KEYS[1] meta
    KEYS[2] usage

    ARGV[1] run id
    ARGV[2] input tokens
    ARGV[3] cached input tokens
    ARGV[4] output tokens
    ARGV[5] cost USD
    ARGV[6] uncached cost USD

  Output:
    the model calls the run made (counted as they were sent), or -1 when the batch is gone
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local fields = {'u_in', 'u_cached', 'u_out', 'u_cost', 'u_uncached'}
local held = redis.call('HGET', KEYS[2], ARGV[1])
local before = held and cjson.decode(held) or {0, 0, 0, 0, 0}
local now = {}
for index, field in ipairs(fields) do
  now[index] = tonumber(ARGV[index + 1]) or 0
  local delta = now[index] - (tonumber(before[index]) or 0)
  if delta ~= 0 then
    if index <= 3 then
      redis.call('HINCRBY', KEYS[1], field, delta)
    else
      redis.call('HINCRBYFLOAT', KEYS[1], field, string.format('%.12f', delta))
    end
  end
end
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(now))
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return tonumber(redis.call('HGET', KEYS[2], 'n:' .. ARGV[1]) or '0')
