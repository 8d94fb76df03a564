--[[
  Fragment, included with --@include: record_call (with the recording helpers). No KEYS or ARGV of its own.

  Records one paid call of a step: its contents (messages, tool lists) not recorded yet, then
  the call itself — within the run's byte budget (RECORD_LUA's record_put), only while the run records
  `full` and is not finished (a finished run's keys are expiring: nothing may be added without a TTL).
  A call recorded already is left as it is (a retried step asks the same, and is answered from its memo).
  `record_call(rk, args, from)`: rk the run's keys (Keys.runAll) · args[from] call field · args[from + 1]
  call JSON · args[from + 2] n · n pairs (content address, JSON) (recordCallArgs builds them) · `m`: the run meta's
  status, record and recordMax when the caller read them already (nil: read here)
  → 'ok' | 'exists' | 'off' (not recording, or finished) | 'over' (the byte budget is spent)
]]
--@include ../../lua/storage-functions.lua
--@include ../../lua/record-functions.lua

-- Fields per HMGET or HSET: Lua's unpack has a stack limit, and a long conversation sends many contents.
local RECORD_CHUNK = 200

-- The values of `fields` in the recording (false where absent), read a chunk per call.
local function record_read(rk, fields)
  local values = {}
  for first = 1, #fields, RECORD_CHUNK do
    local got = redis.call('HMGET', rk[8], unpack(fields, first, math.min(#fields, first + RECORD_CHUNK - 1)))
    for i = 1, #got do values[first + i - 1] = got[i] end
  end
  return values
end

local function record_call(rk, args, from, m)
  m = m or redis.call('HMGET', rk[1], 'status', 'record', 'recordMax')
  if not m[1] or m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or m[2] ~= 'full' then return 'off' end
  local n = tonumber(args[from + 2])
  -- The call, the budget's stop and the call's contents, looked up in one read (were one HEXISTS each).
  local wanted = {args[from], 'over'}
  for i = 0, n - 1 do wanted[#wanted + 1] = args[from + 3 + 2 * i] end
  local have = record_read(rk, wanted)
  if have[1] then return 'exists' end
  if have[2] then return 'over' end
  -- The contents not recorded yet, then the call, in that order.
  local writes, size = {}, 0
  for i = 0, n - 1 do
    if not have[3 + i] then
      local field, value = args[from + 3 + 2 * i], args[from + 4 + 2 * i]
      writes[#writes + 1] = field
      writes[#writes + 1] = value
      size = size + #field + #value
    end
  end
  writes[#writes + 1] = args[from]
  writes[#writes + 1] = args[from + 1]
  size = size + #args[from] + #args[from + 1]
  -- All of it within the byte budget (the usual case): one count and one write for the lot, the same
  -- bytes and fields as a record_put each. Else one at a time, so the recording stops where the budget
  -- does and keeps no holes.
  if redis.call('HINCRBY', rk[8], 'bytes', size) <= tonumber(m[3]) then
    for first = 1, #writes, 2 * RECORD_CHUNK do
      redis.call('HSET', rk[8], unpack(writes, first, math.min(#writes, first + 2 * RECORD_CHUNK - 1)))
    end
    charge(rk, size)
    return 'ok'
  end
  redis.call('HINCRBY', rk[8], 'bytes', -size)
  for i = 1, #writes, 2 do
    if not record_put(rk, m[3], writes[i], writes[i + 1]) then return 'over' end
  end
  return 'ok'
end
