--[[
  Fragment, included with --@include: terminal, run_event, event, expire_run, expire_all, push_from, push_all, the storage ledger's helpers and the recording helpers; RUN_KEY_COUNT is the number of run keys. No KEYS or ARGV of its own.

  Helpers every script shares. `rk` is a run's eight keys in RUN_KEY_SUFFIXES order: KEYS itself in the
  scripts over one run, or a table built in Lua for the run of a job a transition hands out.
]]
--@include ./storage-functions.lua
local function terminal(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
-- An event is charged while the stream is below its cap; past it, each new one takes the place of one
-- trimmed (the events of one run are of a size), so the count stays what the stream keeps.
local function run_event(rk, maxlen, kind, data)
  local id = redis.call('XADD', rk[5], 'MAXLEN', '~', maxlen, '*', 'type', kind, 'data', data)
  if redis.call('XLEN', rk[5]) <= tonumber(maxlen) then charge(rk, #id + #kind + #data + 8) end
  return id
end
local function event(maxlen, kind, data)
  return run_event(KEYS, maxlen, kind, data)
end
local function expire_run(rk, seconds)
  for i = 1, {{RUN_KEY_COUNT}} do redis.call('EXPIRE', rk[i], seconds) end
  release_at(rk, seconds)
end
local function expire_all(seconds)
  expire_run(KEYS, seconds)
end
-- cmd key args[from .. from + count - 1], in as few calls as unpack's stack allows (count even for HSET).
local function push_from(cmd, key, args, from, count)
  local done = 0
  while done < count do
    local last = math.min(done + 500, count)
    redis.call(cmd, key, unpack(args, from + done, from + last - 1))
    done = last
  end
end
local function push_all(cmd, key, from, count)
  push_from(cmd, key, ARGV, from, count)
end

--@include ./record-functions.lua
