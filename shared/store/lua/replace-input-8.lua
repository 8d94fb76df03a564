--[[
  A debounced run's input replaced by a later request's while the run waits to start (FlowGates).
  ARGV: the new input (JSON), now (ms)
  → 1 replaced; 0 the run is finished or already taken in (the caller starts a new run instead);
    -1 no such run (yet: its creator claimed the debounce key a moment before creating it)

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./storage-functions.lua

local meta = redis.call('HMGET', KEYS[1], 'status', 'tasks', 'input')
if not meta[1] then return -1 end
if meta[1] ~= 'queued' or meta[2] then return 0 end
redis.call('HSET', KEYS[1], 'input', ARGV[1], 'updatedAt', ARGV[2])
charge(KEYS, #ARGV[1] - #(meta[3] or ''))
return 1
