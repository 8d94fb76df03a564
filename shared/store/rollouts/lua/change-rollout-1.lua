--[[
  Changes one graph's rollout in one step, so two operators' changes never interleave (a promote reads
  the ramping version it makes current).

  KEYS[1] the rollouts hash (field: graph name, value: JSON {current?, ramp?, percent?, at})
  ARGV: 1 graph · 2 operation: 'set' | 'promote' | 'rollback' | 'pause' · 3 current ('' unchanged)
    · 4 ramping version ('' unchanged, '-' none) · 5 percent ('' unchanged) · 6 now (ms)
  → the rollout's JSON after the change, or {err} with 'no-ramp' (promote, pause: nothing ramps),
    'no-current' (a ramp with no current version to ramp from), 'same' (the ramping version is the current one)
]]
local raw = redis.call('HGET', KEYS[1], ARGV[1])
local r = raw and cjson.decode(raw) or {}
local op, current, ramp, percent = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if op == 'promote' then
  if not r.ramp then return {'no-ramp'} end
  r.current, r.ramp, r.percent = r.ramp, nil, nil
elseif op == 'pause' then
  if not r.ramp then return {'no-ramp'} end
  r.percent = 0
elseif op == 'rollback' then
  r.ramp, r.percent = nil, nil
  if current ~= '' then r.current = current end
else
  if current ~= '' then r.current = current end
  if ramp == '-' then
    r.ramp, r.percent = nil, nil
  elseif ramp ~= '' then
    r.ramp = ramp
  end
  if percent ~= '' then
    if not r.ramp then return {'no-ramp'} end
    r.percent = tonumber(percent)
  end
  -- Making the ramping version current is a promote: nothing ramps any more.
  if r.ramp and r.ramp == r.current then
    if ramp ~= '' then return {'same'} end
    r.ramp, r.percent = nil, nil
  end
  if r.ramp and not r.current then return {'no-current'} end
  if r.ramp and not r.percent then r.percent = 0 end
end
r.at = tonumber(ARGV[6])
local json = cjson.encode(r)
redis.call('HSET', KEYS[1], ARGV[1], json)
return {'ok', json}
