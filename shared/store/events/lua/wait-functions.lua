--[[
  Fragment, included with --@include: matches, fits, settle, keep, closed. No KEYS or ARGV of its own.

  What the wait scripts share. A wait's record (`w:<waitId>` in the run's waits hash) is JSON {name, match, key, until}; its outcome (`d:<waitId>`) is JSON {event} or
  {timedOut: true}; `e:<eventId>` marks an event this run has taken (each event reaches a run once).
]]

-- Whether `data` has every field of `match`: scalars compared as values, tables by their JSON.
local function matches(data, match)
  if next(match) == nil then return true end
  if type(data) ~= 'table' then return false end
  for field, wanted in pairs(match) do
    local got = data[field]
    if type(wanted) == 'table' or type(got) == 'table' then
      if got == nil or cjson.encode(got) ~= cjson.encode(wanted) then return false end
    elseif got ~= wanted then
      return false
    end
  end
  return true
end

-- Whether the open wait `record` (decoded) takes `event` (decoded) at `now`.
local function fits(record, event, now)
  if record.name ~= event.name then return false end
  if record['until'] and record['until'] ~= cjson.null and now >= tonumber(record['until']) then return false end
  return matches(event.data, record.match or {})
end

-- Closes wait `waitId` of the run (waits hash `waits`) with `outcome`; `eventId` taken if not ''.
local function settle(waits, waitId, outcome, eventId)
  redis.call('HDEL', waits, 'w:' .. waitId)
  redis.call('HSET', waits, 'd:' .. waitId, outcome)
  if eventId ~= '' then redis.call('HSET', waits, 'e:' .. eventId, '1') end
end

-- Keeps `key` at least `ms` more milliseconds (never shortens a longer TTL).
local function keep(key, ms)
  if ms <= 0 then return end
  ms = math.ceil(ms)
  local left = redis.call('PTTL', key)
  if left >= 0 and left < ms then redis.call('PEXPIRE', key, ms) end
  if left == -1 then redis.call('PEXPIRE', key, ms) end
end

-- The run is over (or ending): its waits take nothing more.
local function closed(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled' or status == 'cancelling'
end
