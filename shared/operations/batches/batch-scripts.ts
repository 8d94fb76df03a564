/** The batch dispatcher's Lua scripts (BatchDispatcher): each over one batch's keys, one hash tag. */

/**
 * Claims the next item of a running batch if it has a free slot: advances the dispatch cursor and
 * puts the item's run id in the in-flight set, in one step, so two dispatchers never claim one item
 * and a claimed item is never forgotten (a crash after the claim leaves an in-flight id without a run,
 * which `repair` enqueues). The claimed item comes back with the batch's meta, so starting its run needs
 * no further read.
 * Items the admission refused (the meta's `deferred` count) go first: while there are any, nothing new
 * is claimed.
 * → {index, item JSON, meta as HGETALL}, or {-1} not running · {-2} all dispatched · {-3} no free slot · {-4} items deferred
 */
const CLAIM_FN = `
local function claim_next(meta, inflight, items, prefix, now)
  local m = redis.call('HMGET', meta, 'status', 'next', 'total', 'concurrency', 'deferred')
  if m[1] ~= 'running' then return {-1} end
  if tonumber(m[5] or '0') > 0 then return {-4} end
  local next, total = tonumber(m[2]), tonumber(m[3])
  if next >= total then return {-2} end
  if redis.call('SCARD', inflight) >= tonumber(m[4]) then return {-3} end
  redis.call('HSET', meta, 'next', next + 1, 'updatedAt', now)
  redis.call('SADD', inflight, prefix .. next)
  return {next, redis.call('LINDEX', items, next) or '{}', redis.call('HGETALL', meta)}
end
`;

/**
 * A finished run of the batch was retried (in place, same id): it is in flight again, no longer counted
 * as finished. KEYS: 1 meta · 2 inflight · 3 done · ARGV: 1 run id → 1, or 0 when the batch is gone
 */
export const REOPEN = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local was = redis.call('HGET', KEYS[3], ARGV[1])
if was then
  redis.call('HINCRBY', KEYS[1], 'done_' .. was, -1)
  redis.call('HDEL', KEYS[3], ARGV[1])
end
redis.call('SADD', KEYS[2], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`;

/** CLAIM_FN on its own. KEYS: 1 meta · 2 inflight · 3 items · ARGV: 1 run id prefix · 2 now */
export const CLAIM = `${CLAIM_FN}
return claim_next(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])
`;

/**
 * A run of the batch finished: free its slot; the batch is completed once every item was dispatched
 * and none is in flight. While it is still running, the freed slot's next item is claimed in the same
 * step (as CLAIM): the next question starts one round trip after the last one ended, not four.
 * The run's status is counted in the meta (`done_<status>`) once per finish: `done` remembers what each
 * run was counted as, so a retried run that finishes again moves from its old count to its new one.
 * KEYS: 1 meta · 2 inflight · 3 items · 4 done · ARGV: 1 run id · 2 now · 3 run id prefix · 4 the run's status
 * → {batch status} ('missing': the batch expired; nothing is written) or {'running', CLAIM's reply}
 */
export const RELEASE = `${CLAIM_FN}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
redis.call('SREM', KEYS[2], ARGV[1])
local was = redis.call('HGET', KEYS[4], ARGV[1])
if was ~= ARGV[4] then
  if was then redis.call('HINCRBY', KEYS[1], 'done_' .. was, -1) end
  redis.call('HINCRBY', KEYS[1], 'done_' .. ARGV[4], 1)
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
end
local m = redis.call('HMGET', KEYS[1], 'status', 'next', 'total')
if m[1] == 'running' and tonumber(m[2]) >= tonumber(m[3]) and redis.call('SCARD', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[1], 'status', 'completed', 'finishedAt', ARGV[2], 'updatedAt', ARGV[2])
  return {'completed'}
end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[2])
if m[1] ~= 'running' then return {m[1] or 'missing'} end
return {'running', claim_next(KEYS[1], KEYS[2], KEYS[3], ARGV[3], ARGV[2])}
`;
