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

local function record_call(rk, args, from, m)
  m = m or redis.call('HMGET', rk[1], 'status', 'record', 'recordMax')
  if not m[1] or m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or m[2] ~= 'full' then return 'off' end
  if redis.call('HEXISTS', rk[8], args[from]) == 1 then return 'exists' end
  if redis.call('HEXISTS', rk[8], 'over') == 1 then return 'over' end
  for i = 0, tonumber(args[from + 2]) - 1 do
    local field = args[from + 3 + 2 * i]
    if redis.call('HEXISTS', rk[8], field) == 0 and not record_put(rk, m[3], field, args[from + 4 + 2 * i]) then return 'over' end
  end
  if not record_put(rk, m[3], args[from], args[from + 1]) then return 'over' end
  return 'ok'
end
