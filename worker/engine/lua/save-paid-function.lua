--[[
  Fragment, included with --@include: save_paid. No KEYS or ARGV of its own.

  `save_paid`: a step's results saved in the memo hash, and the claim of the call that produced them ended.
]]
local function save_paid(memo, step, results, field, claimant)
  redis.call('HSET', memo, step, results)
  if field ~= '' then
    local held = redis.call('HGET', memo, field)
    if held and cjson.decode(held).owner == claimant then redis.call('HDEL', memo, field) end
  end
end
