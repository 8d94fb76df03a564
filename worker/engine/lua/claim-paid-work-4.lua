--[[
  KEYS: 1 the run's memo hash · 2 its meta · 3 its writes (a parallel superstep's stored task writes)
    · 4 its token log
  ARGV: 1 step id (`s<k>.t<i>`) · 2 memo key · 3 claimant (`<process id>/<call id>`) · 4 attempt · 5 how long the
    claim lasts (ms) · 6 liveness key prefix of the run's shard · 7 superstep · 8 task
    · 9 a claimant of this process known to be over ('' none: an earlier delivery here whose call ended
    without releasing) · 10 takeover wait (ms) after the owner's liveness lapsed (AGENTQ_PAID_CLAIM_TAKEOVER_MS)
    · 11 the run's token channel · 12 '1' on a Redis Cluster, else '0' · 13 '1' when the step is its superstep's
    only task (no other task stores a write; a commit moves the superstep on), else '0'
  Times are Redis's (TIME), never a worker's: a claimant whose clock runs ahead would otherwise see a live
  claim of another machine as run out, and pay for the call a second time.
  → {'memo', result JSON} (saved by an earlier attempt) | {'claimed', followed} | {'wait', owner, ends at ms}
    | {'stale'}: the step is committed already (a delivery that began before the commit and reaches its paid
    call after it: the commit dropped the step's memo, and paying now would be paying twice)
  `followed`: '1' when someone follows the run's live tokens (tokens-followed.lua), else '0': the call about
  to stream learns it here, so a run nobody follows publishes none of its tokens at no extra round trip.

  KEYS[1..4] as listed above: memo hash, meta, writes, token log
]]
--@include ../../../shared/store/lua/tokens-followed.lua
local m = redis.call('HMGET', KEYS[2], 'status', 'superstep')
if not m[1] or m[1] == 'completed' or m[1] == 'failed' or m[1] == 'cancelled' or tonumber(m[2]) ~= tonumber(ARGV[7]) then return {'stale'} end
if ARGV[13] ~= '1' and redis.call('HEXISTS', KEYS[3], ARGV[8]) == 1 then return {'stale'} end
local field = 'claim:' .. ARGV[1] .. ':' .. ARGV[2]
-- The step's saved results and this call's claim, read together.
local memo = redis.call('HMGET', KEYS[1], ARGV[1], field)
if memo[1] then
  local memos = cjson.decode(memo[1])
  if memos[ARGV[2]] ~= nil then return {'memo', cjson.encode(memos[ARGV[2]])} end
end
local held = memo[2]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if held then
  local claim = cjson.decode(held)
  local process_id = string.match(claim.owner, '^(.*)/[^/]*$') or claim.owner
  -- Another call's claim holds while it has not run out and its process still beats (liveness-thread.ts),
  -- and for the takeover wait after its beats stopped (a paused process may still finish its call).
  if claim.owner ~= ARGV[3] and claim.owner ~= ARGV[9] and tonumber(claim.endsAt) > now then
    if redis.call('EXISTS', ARGV[6] .. process_id) == 1 then
      if claim.silentSince then
        claim.silentSince = nil
        redis.call('HSET', KEYS[1], field, cjson.encode(claim))
      end
      return {'wait', claim.owner, tostring(claim.endsAt)}
    end
    local takeover = tonumber(ARGV[10])
    if takeover > 0 then
      if not claim.silentSince then
        claim.silentSince = now
        redis.call('HSET', KEYS[1], field, cjson.encode(claim))
      end
      if now - tonumber(claim.silentSince) < takeover then return {'wait', claim.owner, tostring(claim.endsAt)} end
    end
  end
end
redis.call('HSET', KEYS[1], field, cjson.encode({owner = ARGV[3], attempt = tonumber(ARGV[4]), endsAt = now + tonumber(ARGV[5])}))
return {'claimed', tokens_followed(KEYS[4], ARGV[11], ARGV[12]) and '1' or '0'}
