--[[
  Fragment, included with --@include: terminal, run_event, event, expire_run, expire_all, push_from, push_all, the storage ledger's helpers and the recording helpers; RUN_KEY_COUNT is the number of run keys. No KEYS or ARGV of its own.

  Helpers every script shares. `rk` is a run's eight keys in RUN_KEY_SUFFIXES order: KEYS itself in the
  scripts over one run, or a table built in Lua for the run of a job a transition hands out.
]]
--@include ./storage-functions.lua
local function terminal(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
-- An event is charged as it is added. Past the cap the stream is trimmed to it a hundred entries at a
-- time (as MAXLEN ~ trims by whole nodes, without a trim on every add), and the bytes of the entries
-- trimmed, read first, are given back: the charge stays what the stream keeps.
-- Each stream's length as this script last knew it: a second event of the same script (a transition's
-- step-end and the next step's start) counts on from the first instead of asking XLEN again. Only run_event
-- writes a run's events, and no script deletes them.
local event_lengths = {}
local function run_event(rk, maxlen, kind, data)
  local id = redis.call('XADD', rk[5], '*', 'type', kind, 'data', data)
  local added = #id + #kind + #data + 8
  local known = event_lengths[rk[5]]
  local length = known and known + 1 or redis.call('XLEN', rk[5])
  local over = length - tonumber(maxlen)
  if over >= 100 then
    for _, entry in ipairs(redis.call('XRANGE', rk[5], '-', '+', 'COUNT', over)) do
      added = added - #entry[1]
      for _, value in ipairs(entry[2]) do added = added - #value end
    end
    redis.call('XTRIM', rk[5], 'MAXLEN', maxlen)
    length = tonumber(maxlen)
  end
  event_lengths[rk[5]] = length
  charge(rk, added)
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
