--[[
  Fragment, included with --@include: save_paid. No KEYS or ARGV of its own.

  `save_paid`: a step's results saved in the memo hash, and the claim of the call that produced them ended
  → true, or false when the run has finished or is gone (nothing written). A paused worker's save may come
  after the run ended elsewhere: its memo hash was dropped by the commit or expired with the run, and an
  HSET now would make it again with no TTL, kept forever. `status`: the run's status when the caller read it
  already (false: the run is gone); nil: read here.
]]
local function save_paid(meta, memo, step, results, field, claimant, status)
  if status == nil then status = redis.call('HGET', meta, 'status') end
  if not status or status == 'completed' or status == 'failed' or status == 'cancelled' then return false end
  redis.call('HSET', memo, step, results)
  if field ~= '' then
    local held = redis.call('HGET', memo, field)
    if held and cjson.decode(held).owner == claimant then redis.call('HDEL', memo, field) end
  end
  return true
end
