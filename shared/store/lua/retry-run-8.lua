--[[
  Retry a failed run from its last commit: back to running, expiry removed, same superstep. The run keeps
  a link to the attempt that failed (retryOf: how many attempts before, the last one's error and end).
  ARGV: 1 now · 2 events maxlen · 3 the failure to retry: its finishedAt ('' = whichever): a bulk retry
    that matched a run's failure never retries a later one (another command retried it meanwhile)
  → {'ok', superstep, tasks} | {'missing'} | {'not-failed', status} | {'no-tasks'}

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua

local m = redis.call('HMGET', KEYS[1], 'status', 'superstep', 'tasks', 'error', 'finishedAt', 'retryOf')
if not m[1] then return {'missing'} end
if m[1] ~= 'failed' then return {'not-failed', m[1]} end
if ARGV[3] and ARGV[3] ~= '' and m[5] ~= ARGV[3] then return {'not-failed', 'retried since'} end
if not m[3] or m[3] == '[]' then return {'no-tasks'} end
local attempts = 1
if m[6] then attempts = (tonumber(cjson.decode(m[6])['attempts']) or 0) + 1 end
redis.call('HSET', KEYS[1], 'status', 'running', 'updatedAt', ARGV[1],
  'retryOf', '{"attempts":' .. attempts .. ',"error":' .. (m[4] or 'null') .. ',"failedAt":' .. (m[5] or 'null') .. '}')
redis.call('HDEL', KEYS[1], 'error', 'finishedAt')
for i = 1, {{RUN_KEY_COUNT}} do redis.call('PERSIST', KEYS[i]) end
keep_charged(KEYS)
event(ARGV[2], 'run-retry', '{"superstep":' .. m[2] .. '}')
return {'ok', m[2], m[3]}
