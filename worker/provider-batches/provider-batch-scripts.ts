/**
 * The Lua scripts of model calls through the provider's Batch API. A call is named by its
 * custom id `<run id>|<step id>|<memo key>|<attempt>`; its state lives in the batch's `calls` hash
 * (Keys.providerBatch), one JSON object per call:
 *   {s: 'pending', m: model, at: parked at ms}             parked, not yet in a provider batch
 *   {s: 'assigned', m, at, f: flush id}                     in that flush's provider batch (at most one)
 *   {s: 'applied', f}                                       answered: the answer is in the step's memo
 *   {s: 'error', f, e: error record}                        answered with an error: the step fails with it
 *   {s: 'live', f}                                          to be called live (AGENTQ_PROVIDER_BATCH_FALLBACK=live)
 * Each script works on one batch's keys (one hash tag), except APPLY_ANSWER, which works on one run's.
 */

/**
 * A step's call asks to go in a provider batch. A call seen before answers its state; an error or a
 * live verdict is handed over once (the step acts on it; its retry is another attempt, another call).
 * KEYS: 1 calls · 2 pending · 3 bodies · 4 the batch's meta
 * ARGV: 1 custom id · 2 the request line (JSONL) · 3 now (ms) · 4 model
 * → {state, call JSON} | {'pending', ''} registered now | {'closed', status}: the batch is not running
 */
export const REGISTER_CALL = `
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then
  local call = cjson.decode(held)
  if call.s == 'error' or call.s == 'live' then
    redis.call('HDEL', KEYS[1], ARGV[1])
    redis.call('HDEL', KEYS[3], ARGV[1])
  end
  return {call.s, held}
end
local status = redis.call('HGET', KEYS[4], 'status')
if status ~= 'running' then return {'closed', status or 'missing'} end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({s = 'pending', m = ARGV[4], at = tonumber(ARGV[3])}))
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return {'pending', ''}
`;

/**
 * Takes the oldest pending calls of one model into a new flush (the intent of one provider batch,
 * recorded before anything is uploaded): at most ARGV[1] calls and ARGV[2] bytes of request lines (at
 * least one call, whatever its size). A call goes into one flush only: it leaves `pending` here.
 * KEYS: 1 pending · 2 calls · 3 bodies · 4 the new flush's hash · 5 flushes
 * ARGV: 1 max requests · 2 max bytes · 3 now · 4 flush id
 * → the number of calls taken (0: none pending)
 */
export const TAKE_FLUSH = `
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
local model = nil
local taken = {}
local bytes = 0
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[2], id)
  local size = redis.call('HSTRLEN', KEYS[3], id)
  if not raw or size == 0 then
    redis.call('ZREM', KEYS[1], id)
  else
    local call = cjson.decode(raw)
    if model == nil then model = call.m end
    if call.m == model then
      if #taken > 0 and bytes + size + 1 > tonumber(ARGV[2]) then break end
      bytes = bytes + size + 1
      taken[#taken + 1] = id
    end
  end
end
if #taken == 0 then return 0 end
for _, id in ipairs(taken) do
  local call = cjson.decode(redis.call('HGET', KEYS[2], id))
  redis.call('ZREM', KEYS[1], id)
  redis.call('HSET', KEYS[2], id, cjson.encode({s = 'assigned', m = model, at = call.at, f = ARGV[4]}))
end
redis.call('HSET', KEYS[4], 'id', ARGV[4], 'state', 'intent', 'model', model, 'ids', cjson.encode(taken),
  'requests', #taken, 'bytes', bytes, 'createdAt', ARGV[3], 'updatedAt', ARGV[3])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[4])
return #taken
`;

/**
 * Saves a call's answer in its step's memo, where a live call's answer is saved (so it is paid for once), if the run is
 * still at that step; the step's other saved results are kept as they are (appended to, never re-encoded).
 * KEYS: 1 the run's memo hash · 2 its meta · 3 its writes
 * ARGV: 1 step id (`s<k>.t<i>`) · 2 memo key · 3 the answer (JSON) · 4 superstep · 5 task
 * → 'saved' | 'present' (saved before) | 'stale' (the run moved on or ended) | 'missing'
 */
export const APPLY_ANSWER = `
local m = redis.call('HMGET', KEYS[2], 'status', 'superstep')
if not m[1] then return 'missing' end
if m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or tonumber(m[2]) ~= tonumber(ARGV[4]) then return 'stale' end
if redis.call('HEXISTS', KEYS[3], ARGV[5]) == 1 then return 'stale' end
local entry = cjson.encode(ARGV[2]) .. ':' .. ARGV[3]
local saved = redis.call('HGET', KEYS[1], ARGV[1])
if not saved or string.match(saved, '^%s*{%s*}%s*$') then
  redis.call('HSET', KEYS[1], ARGV[1], '{' .. entry .. '}')
  return 'saved'
end
if cjson.decode(saved)[ARGV[2]] ~= nil then return 'present' end
redis.call('HSET', KEYS[1], ARGV[1], string.sub(saved, 1, -2) .. ',' .. entry .. '}')
return 'saved'
`;

/**
 * A flush's calls get their verdicts, and the flush its next state, in one step: a call still assigned
 * to this flush becomes ARGV[1]'s state for it (`pending` again: resubmitted in a later flush); a call
 * another flush took meanwhile is left alone.
 * KEYS: 1 calls · 2 pending · 3 bodies · 4 the flush's hash
 * ARGV: 1 verdicts JSON {custom id: {s, e?}} · 2 now · 3 the flush's next state
 */
export const MARK_CALLS = `
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
`;

/**
 * Calls still pending get a verdict without going in any provider batch (the batch was cancelled, or
 * the provider has no Batch API): each becomes ARGV[1]'s call state.
 * KEYS: 1 calls · 2 pending · 3 bodies · ARGV: 1 call state JSON
 * → the custom ids it settled
 */
export const SETTLE_PENDING = `
local ids = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, id in ipairs(ids) do
  redis.call('HSET', KEYS[1], id, ARGV[1])
  redis.call('HDEL', KEYS[3], id)
end
redis.call('DEL', KEYS[2])
return ids
`;

/** Renews the collector's lease if this worker still holds it. KEYS: 1 lease · ARGV: 1 holder · 2 ms → 1 held, 0 not */
export const RENEW_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;
