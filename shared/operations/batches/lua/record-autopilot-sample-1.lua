--[[
  One finished question of a graph moves the tenant's rolling averages a fifth of the way towards it
  (the first sets them): tokens in and out, model calls, and ms per call in the mode it was answered in.

  Input:
    KEYS[1] the tenant's stats of the graph

    ARGV[1] input tokens
    ARGV[2] output tokens
    ARGV[3] model calls
    ARGV[4] mode (live, flex, batch)
    ARGV[5] ms per call (0: not measured)
    ARGV[6] seconds to keep the stats after the last sample

  Output:
    the samples seen
]]
local function move(field, value)
  local old = tonumber(redis.call('HGET', KEYS[1], field) or '')
  local new = old and old + 0.2 * (value - old) or value
  redis.call('HSET', KEYS[1], field, string.format('%.3f', new))
end
move('in', tonumber(ARGV[1]))
move('out', tonumber(ARGV[2]))
move('calls', tonumber(ARGV[3]))
if tonumber(ARGV[5]) > 0 then move('ms_' .. ARGV[4], tonumber(ARGV[5])) end
local seen = redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[6]))
return seen
