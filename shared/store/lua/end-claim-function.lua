--[[
  Fragment, included with --@include: end_claim. No KEYS or ARGV of its own.

  `end_claim(memo, field, claimant)`: the claim on a paid call (its field in the run's memo hash) ended, if it
  is still `claimant`'s: a claim another delivery took over meanwhile stays theirs.
]]
local function end_claim(memo, field, claimant)
  local held = redis.call('HGET', memo, field)
  if held and cjson.decode(held).owner == claimant then redis.call('HDEL', memo, field) end
end
