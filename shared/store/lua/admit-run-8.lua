--[[
  The intake's hand-over: initial state, the first superstep's tasks, and the messages a conversation's
  run starts with — in one script, so a duplicate intake delivery can never seed a history twice or
  overwrite one that steps already appended to. A start job (docs/concepts/step-engine.md) also starts its task here,
  which saves it a second BEGIN.
  ARGV: 1 now · 2 graphVersion · 3 tasks JSON · 4 trace ('' = none) · 5 task to start ('' = none)
    · 6 events maxlen · 7 step-start data JSON · 8 n · then n state field/value pairs · then m · m messages
    JSON (m may be absent: no messages)
  → 'ok' | 'missing' | 'admitted' (done before) | <status> (no longer queued) | BEGIN's 'run' reply (task started)

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua
--@include ./start-task.lua

local m = redis.call('HMGET', KEYS[1], 'status', 'tasks')
if not m[1] then return 'missing' end
if m[2] then return 'admitted' end
if m[1] ~= 'queued' then return m[1] end
local n = tonumber(ARGV[8])
push_all('HSET', KEYS[2], 9, 2 * n)
local pos = 9 + 2 * n
local seeded = tonumber(ARGV[pos] or '0')
if seeded > 0 then
  redis.call('DEL', KEYS[3])
  push_all('RPUSH', KEYS[3], pos + 1, seeded)
end
charge(KEYS, bytes_of(ARGV, 9, 2 * n + seeded) + #ARGV[3])
redis.call('HSET', KEYS[1], 'graphVersion', ARGV[2], 'tasks', ARGV[3], 'superstep', 0, 'updatedAt', ARGV[1])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'trace', ARGV[4]) end
local rec = redis.call('HMGET', KEYS[1], 'record', 'recordMax')
if rec[1] then record_put(KEYS, rec[2], 'b0', boundary(seeded, ARGV[3], ARGV, 9, n)) end
if ARGV[5] == '' then return 'ok' end
return start_task(KEYS, redis.call('HMGET', KEYS[1], {{STEP_FIELDS}}), '0', ARGV[5], ARGV[1], ARGV[6], ARGV[7], false)
