--[[
  A flush's calls get their verdicts, and the flush its next state, in one step: a call still assigned
  to this flush becomes ARGV[1]'s state for it (`pending` again: resubmitted in a later flush); a call
  another flush took meanwhile is left alone.
  KEYS: 1 calls · 2 pending · 3 bodies · 4 the flush's hash
  ARGV: 1 verdicts JSON {custom id: {s, e?}} · 2 now · 3 the flush's next state

  KEYS[1..4] as listed above: calls, pending, bodies, the flush's hash
]]
local verdicts = cjson.decode(ARGV[1])
local flush = redis.call('HGET', KEYS[4], 'id')
for id, verdict in pairs(verdicts) do
  local raw = redis.call('HGET', KEYS[1], id)
  local call = raw and cjson.decode(raw)
  if call and call.s == 'assigned' and call.f == flush then
    if verdict.s == 'pending' then
      redis.call('HSET', KEYS[1], id, cjson.encode({s = 'pending', m = call.m, at = call.at}))
      redis.call('ZADD', KEYS[2], ARGV[2], id)
    else
      verdict.f = flush
      redis.call('HSET', KEYS[1], id, cjson.encode(verdict))
      redis.call('HDEL', KEYS[3], id)
    end
  end
end
redis.call('HSET', KEYS[4], 'state', ARGV[3], 'updatedAt', ARGV[2])
return 1
