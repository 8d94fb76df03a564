--[[
  Fragment, included with --@include: add_run_usage(meta, usage, run_id, values). No KEYS or ARGV of its own.

  A run of the batch finished: its usage (`values`: input tokens, cached input tokens, output tokens, cost
  USD, uncached cost USD) goes into the batch's totals in the meta (`u_in`, `u_cached`, `u_out`, `u_cost`,
  `u_uncached`). `usage` remembers what each run added, so a retried run that finishes again replaces its
  share instead of adding it twice. The meta must exist.
  → the model calls the run made (counted as they were sent)
]]
local function add_run_usage(meta, usage, run_id, values)
  local fields = {'u_in', 'u_cached', 'u_out', 'u_cost', 'u_uncached'}
  local held = redis.call('HGET', usage, run_id)
  local before = held and cjson.decode(held) or {0, 0, 0, 0, 0}
  local now = {}
  for index, field in ipairs(fields) do
    now[index] = tonumber(values[index]) or 0
    local delta = now[index] - (tonumber(before[index]) or 0)
    if delta ~= 0 then
      if index <= 3 then
        redis.call('HINCRBY', meta, field, delta)
      else
        redis.call('HINCRBYFLOAT', meta, field, string.format('%.12f', delta))
      end
    end
  end
  redis.call('HSET', usage, run_id, cjson.encode(now))
  local ttl = redis.call('PTTL', meta)
  if ttl > 0 then redis.call('PEXPIRE', usage, ttl) end
  return tonumber(redis.call('HGET', usage, 'n:' .. run_id) or '0')
end
