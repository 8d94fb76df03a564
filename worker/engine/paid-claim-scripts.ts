import { RECORD_CALL_LUA } from '../../shared/store/recordings/record-call-script.js';

/**
 * Claims on paid work: before a step pays for a model call (or embeddings, moderation, a tool
 * marked paid — anything behind NodeContext.memo), it claims that call in the run's memo hash, atomically
 * with reading whether an earlier attempt already saved its result. A duplicate delivery of the step (its
 * job's lock expired while the owner was merely slow) finds the claim and waits instead of paying again.
 * Fields of the memo hash: `s<k>.t<i>` the step's saved results (JSON map), `claim:s<k>.t<i>:<key>` a claim.
 */

/**
 * KEYS: 1 the run's memo hash · 2 its meta · 3 its writes (a parallel superstep's stored task writes)
 * ARGV: 1 step id (`s<k>.t<i>`) · 2 memo key · 3 claimant (`<process id>/<call id>`) · 4 attempt · 5 claim ends at (ms)
 *   · 6 now (ms) · 7 liveness key prefix of the run's shard · 8 superstep · 9 task
 *   · 10 a claimant of this process known to be over ('' none: an earlier delivery here whose call ended
 *   without releasing) · 11 takeover wait (ms) after the owner's liveness lapsed (AGENTQ_PAID_CLAIM_TAKEOVER_MS)
 * → {'memo', result JSON} (saved by an earlier attempt) | {'claimed'} | {'wait', owner, ends at ms}
 *   | {'stale'}: the step is committed already (a delivery that began before the commit and reaches its paid
 *   call after it: the commit dropped the step's memo, and paying now would be paying twice)
 */
export const CLAIM_PAID_WORK = `
local m = redis.call('HMGET', KEYS[2], 'status', 'superstep')
if not m[1] or m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or tonumber(m[2]) ~= tonumber(ARGV[8]) then return {'stale'} end
if redis.call('HEXISTS', KEYS[3], ARGV[9]) == 1 then return {'stale'} end
local saved = redis.call('HGET', KEYS[1], ARGV[1])
if saved then
  local memos = cjson.decode(saved)
  if memos[ARGV[2]] ~= nil then return {'memo', cjson.encode(memos[ARGV[2]])} end
end
local field = 'claim:' .. ARGV[1] .. ':' .. ARGV[2]
local held = redis.call('HGET', KEYS[1], field)
local now = tonumber(ARGV[6])
if held then
  local claim = cjson.decode(held)
  local process_id = string.match(claim.owner, '^(.*)/[^/]*$') or claim.owner
  -- Another call's claim holds while it has not run out and its process still beats (liveness-thread.ts),
  -- and for the takeover wait after its beats stopped (a paused process may still finish its call).
  if claim.owner ~= ARGV[3] and claim.owner ~= ARGV[10] and tonumber(claim.endsAt) > now then
    if redis.call('EXISTS', ARGV[7] .. process_id) == 1 then
      if claim.silentSince then
        claim.silentSince = nil
        redis.call('HSET', KEYS[1], field, cjson.encode(claim))
      end
      return {'wait', claim.owner, tostring(claim.endsAt)}
    end
    local takeover = tonumber(ARGV[11])
    if takeover > 0 then
      if not claim.silentSince then
        claim.silentSince = now
        redis.call('HSET', KEYS[1], field, cjson.encode(claim))
      end
      if now - tonumber(claim.silentSince) < takeover then return {'wait', claim.owner, tostring(claim.endsAt)} end
    end
  end
end
redis.call('HSET', KEYS[1], field, cjson.encode({owner = ARGV[3], attempt = tonumber(ARGV[4]), endsAt = tonumber(ARGV[5])}))
return {'claimed'}
`;

/**
 * The last look before a claimed call is paid for (a paused worker sent calls 5-6 s after the
 * step was committed elsewhere). Reads only, so it answers while Redis is full.
 * KEYS: 1 memo hash · 2 meta · 3 writes · ARGV: 1 claim field · 2 claimant · 3 superstep · 4 task
 * → 'ok' | 'stale' (committed, finished or moved on) | 'lost' (the claim is another's now, or gone)
 */
export const CONFIRM_PAID_CLAIM = `
local m = redis.call('HMGET', KEYS[2], 'status', 'superstep')
if not m[1] or m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or tonumber(m[2]) ~= tonumber(ARGV[3]) then return 'stale' end
if redis.call('HEXISTS', KEYS[3], ARGV[4]) == 1 then return 'stale' end
local held = redis.call('HGET', KEYS[1], ARGV[1])
if not held or cjson.decode(held).owner ~= ARGV[2] then return 'lost' end
return 'ok'
`;

/** `save_paid`: a step's results saved in the memo hash, and the claim of the call that produced them ended. */
const SAVE_FN = `
local function save_paid(memo, step, results, field, claimant)
  redis.call('HSET', memo, step, results)
  if field ~= '' then
    local held = redis.call('HGET', memo, field)
    if held and cjson.decode(held).owner == claimant then redis.call('HDEL', memo, field) end
  end
end
`;

/**
 * Save a step's results and end the claim of the call that produced them, in one script.
 * KEYS: 1 the run's memo hash · ARGV: 1 step id · 2 the step's results JSON · 3 claim field ('' none) · 4 claimant
 */
export const SAVE_PAID_WORK = `${SAVE_FN}
save_paid(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return 1
`;

/**
 * SAVE_PAID_WORK and the call's recording in one script, for a run that records `full`: one
 * round trip where the save and RECORD_CALL were two, in the same order (the recording after the save).
 * KEYS: the run's keys (Keys.runAll; 7 is the memo hash) · ARGV: 1-4 as SAVE_PAID_WORK's · 5… recordCallArgs
 * → record_call's verdict
 */
export const SAVE_AND_RECORD_PAID_WORK = `${RECORD_CALL_LUA}${SAVE_FN}
save_paid(KEYS[7], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return record_call(KEYS, ARGV, 5)
`;

/** End a claim without a result (the call failed or was abandoned), if it is still the claimant's. KEYS: 1 memo hash · ARGV: 1 claim field · 2 claimant */
export const RELEASE_PAID_CLAIM = `
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and cjson.decode(held).owner == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) return 1 end
return 0
`;
