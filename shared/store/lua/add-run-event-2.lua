--[[
  An event added to a run's stream while the run exists. A late writer (a paused worker) whose run
  expired meanwhile would make the stream again with no TTL; a finished run's stream keeps the expiry
  its end gave it (XADD leaves a key's TTL), and one made after that end takes the meta's.
  KEYS: 1 the run's meta · 2 its events · ARGV: 1 events maxlen · 2 type · 3 data JSON
  → the entry's id | nil (the run is gone: nothing written)

  KEYS[1] the run's meta
  KEYS[2] the run's events
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'type', ARGV[2], 'data', ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 and redis.call('PTTL', KEYS[2]) == -1 then redis.call('PEXPIRE', KEYS[2], ttl) end
return id
