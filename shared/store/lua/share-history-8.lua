--[[
  A conversation turn's shared history, on one run: sets one meta field (a later turn's `historyOf`, or an
  earlier turn's `continuedBy`), charged as stored, and, when ARGV[3] is given, keeps the run for at least
  that many seconds from now: all its keys, and its bytes in its tenant's storage ledger, so an earlier
  turn whose messages a later one shares stays stored and charged as long. Only lengthens: a run already
  kept longer and an unfinished one (no expiry) keep their own.
  ARGV: 1 meta field · 2 its value · 3 seconds ('' = leave the expiry)
  → 1 | 0 (the run is gone)

  KEYS[1..8] the run's keys (Keys.runAll): meta, state, messages, steps, events, writes, memo, record
]]
--@include ./run-functions.lua

if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
charge(KEYS, old and #ARGV[2] - #old or #ARGV[1] + #ARGV[2])
if ARGV[3] == '' then return 1 end
local ttl = redis.call('TTL', KEYS[1])
if ttl >= 0 and ttl < tonumber(ARGV[3]) then
  expire_all(ARGV[3])
  release_at(KEYS, ARGV[3])
end
return 1
