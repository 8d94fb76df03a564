--[[
  A cold fetch (no transition handed a job out): BullMQ's moveToActive, then BEGIN of the job it took,
  up to ARGV[8] times — a worker with many free slots fills them in one round trip instead of one per
  slot. The i-th job (i > 1) is locked with token ARGV[3] .. '.' .. i. It stops at the first
  moveToActive that takes nothing (an empty, paused or rate-limited queue), whose reply is the last.
  KEYS: moveToActive's queue keys (the seam's moveToActiveKeys; the script names them from ARGV[1])
  ARGV: 1 queue key prefix · 2 now · 3 lock token · 4 lock duration ms · 5 worker name ('' none)
    · 6 run key prefix of the shard · 7 events maxlen · 8 jobs wanted
  → a list of {moveToActive's [fields, id, rate-limit delay, delay until], BEGIN reply or false, lock token}

  KEYS[1..11] moveToActive's queue keys (moveToActiveKeys)
  BULLMQ: the placeholder is the Lua of the BullMQ seam's helpers (bullmqLua)
]]
--@include ./run-step-functions.lua
{{BULLMQ}}
--@include ./deliver.lua

local q = bullmq_queue_keys(ARGV[1])
local out = {}
for i = 1, tonumber(ARGV[8]) do
  local token = i == 1 and ARGV[3] or ARGV[3] .. '.' .. i
  local taken = bullmq_take_job(q, ARGV[2], token, tonumber(ARGV[4]), ARGV[5])
  local begun = false
  if type(taken[1]) == 'table' then begun = deliver(taken, ARGV[2], ARGV[7], ARGV[6], '', false) end
  out[i] = {taken, begun, token}
  if type(taken[1]) ~= 'table' then break end
end
return out
