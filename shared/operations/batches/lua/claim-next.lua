--[[
  Fragment, included with --@include: claim_next(meta, inflight, items, prefix, now). No KEYS or ARGV of
  its own.

  Claims the next item of a running batch if it has a free slot: advances the dispatch cursor and puts
  the item's run id in the in-flight set, in one step, so two dispatchers never claim one item and a
  claimed item is never forgotten (a crash after the claim leaves an in-flight id without a run, which
  `repair` enqueues). The claimed item comes back with the batch's meta, so starting its run needs no
  further read. Items the admission refused (the meta's `deferred` count) go first: while there are
  any, nothing new is claimed. While the meta's `warmup` is set, one item at a time: the first question's
  first model call puts the prompt prefix every question shares in the provider's cache before the rest send.
  → {index, item JSON, meta as HGETALL, free}, or {-1} not running | {-2} all dispatched | {-3} no free slot
    | {-4} items deferred. `free`: the slots this claim left free with items left to fill them (0: a claim
  now would stop at -2 or -3), so the dispatcher skips a claim that could only say so.
]]
local function claim_next(meta, inflight, items, prefix, now)
  local m = redis.call('HMGET', meta, 'status', 'next', 'total', 'concurrency', 'deferred', 'warmup')
  if m[1] ~= 'running' then return {-1} end
  if tonumber(m[5] or '0') > 0 then return {-4} end
  local next, total = tonumber(m[2]), tonumber(m[3])
  if next >= total then return {-2} end
  local cap = m[6] == '1' and 1 or tonumber(m[4])
  if redis.call('SCARD', inflight) >= cap then return {-3} end
  redis.call('HSET', meta, 'next', next + 1, 'updatedAt', now)
  redis.call('SADD', inflight, prefix .. next)
  local free = 0
  if next + 1 < total then free = cap - redis.call('SCARD', inflight) end
  return {next, redis.call('LINDEX', items, next) or '{}', redis.call('HGETALL', meta), free}
end
