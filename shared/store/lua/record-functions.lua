--[[
  Fragment, included with --@include: record_put, boundary. No KEYS or ARGV of its own; it needs the
  storage ledger's helpers (storage-functions.lua) included before it.

  The recording's helpers: every script that may record includes them (through TERMINAL).
]]
-- The run's recording for time travel (rk[8]): writes field unless the run's byte budget (max) is spent. The first
-- write refused names itself in 'over' and fills the budget, so later writes are refused too: a recording
-- is whole up to the point it stops, never with holes.
local function record_put(rk, max, field, value)
  local size = #field + #value
  local used = redis.call('HINCRBY', rk[8], 'bytes', size)
  if used > tonumber(max) then
    redis.call('HSET', rk[8], 'bytes', max)
    redis.call('HSETNX', rk[8], 'over', field)
    return false
  end
  redis.call('HSET', rk[8], field, value)
  charge(rk, size)
  return true
end
-- A superstep boundary as the recording keeps it (b<k>): the history's length, the tasks and the state
-- change (its changed keys, values as JSON already), from args[from .. from + 2n - 1].
local function boundary(messages_len, tasks, args, from, n)
  local s = {}
  for i = 0, n - 1 do s[#s + 1] = cjson.encode(args[from + 2 * i]) .. ':' .. args[from + 2 * i + 1] end
  return '{"m":' .. messages_len .. ',"t":' .. tasks .. ',"s":{' .. table.concat(s, ',') .. '}}'
end
