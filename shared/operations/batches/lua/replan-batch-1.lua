--[[
  A planned batch changes mode (a re-plan): only if it is still running in the mode the re-plan started
  from, so two collectors (or a collector and a stop) never undo each other.

  Input:
    KEYS[1] meta

    ARGV[1] the mode the re-plan read
    ARGV[2] the new mode
    ARGV[3] the new autopilot JSON
    ARGV[4] now (ms)
    ARGV[5] the new concurrency, or '' to keep it

  Output:
    1 changed, 0 the batch moved on meanwhile (not running, stopped, or another mode)
]]
local m = redis.call('HMGET', KEYS[1], 'status', 'mode', 'stopped')
if m[1] ~= 'running' or m[3] or (m[2] or 'live') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'mode', ARGV[2], 'autopilot', ARGV[3], 'updatedAt', ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'concurrency', ARGV[5]) end
return 1
