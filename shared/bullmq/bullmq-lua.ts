import { bullmqFunctionsLua, type BullmqScriptName } from './bullmq-functions.js';
import { keysTableLua, queueKeysLua } from './bullmq-keys.js';

/**
 * The Lua agentq's own scripts call to act on a BullMQ queue, by name: each helper below takes the queue's
 * named keys (`q`, from `bullmq_queue_keys(prefix, job_id)`) and plain arguments, and knows BullMQ's
 * KEYS/ARGV layouts, its msgpack'd options, its job hash fields, its lock and event formats. The scripts of
 * the run store (shared/store/step-transition-scripts.ts) use only these names.
 *
 * Job options (`opts`) are a Lua table in BullMQ's public JobsOptions names: `jobId`, `attempts`, `backoff`,
 * and `priority` (only when > 0).
 */
type BullmqLuaHelper = 'addJob' | 'takeJob' | 'completeJob' | 'jobData' | 'leanHop' | 'takeIfNext';

const HELPERS: Record<BullmqLuaHelper, { scripts: BullmqScriptName[]; lua: string }> = {
  // Queue.add of one job: BullMQ's addPrioritizedJob for a priority > 0, else addStandardJob. → the job id.
  addJob: {
    scripts: ['addStandardJob', 'addPrioritizedJob'],
    lua: `
local function bullmq_add_job(q, id, name, data, opts, now)
  local args = cmsgpack.pack({q.prefix, id, name, now})
  if opts.priority and opts.priority > 0 then
    return bull_addPrioritizedJob(${keysTableLua('addPrioritizedJob')}, {args, data, cmsgpack.pack(opts)})
  end
  return bull_addStandardJob(${keysTableLua('addStandardJob')}, {args, data, cmsgpack.pack(opts)})
end
`,
  },
  // A worker's fetch (BullMQ's moveToActive), the job locked with token. → [job hash pairs, id, rate-limit delay, delay until]
  takeJob: {
    scripts: ['moveToActive'],
    lua: `
local function bullmq_take_job(q, now, token, lock_ms, worker_name)
  local opts = cmsgpack.pack({token = token, lockDuration = lock_ms, name = worker_name ~= '' and worker_name or nil})
  return bull_moveToActive(${keysTableLua('moveToActive')}, {q.prefix, now, opts})
end
`,
  },
  // Completing a job a worker holds (BullMQ's moveToFinished, target completed), keeping keep completed
  // jobs (-1 all), and with fetch '1' taking the next job of the queue. → 0 or the next job as takeJob's
  // reply, or BullMQ's negative code (-2 missing, -3 not active, -6 lock lost, …).
  completeJob: {
    scripts: ['moveToFinished'],
    lua: `
local function bullmq_complete_job(q, job_id, now, returnvalue, fetch, token, keep, lock_ms, attempts, worker_name)
  local opts = cmsgpack.pack({token = token, keepJobs = {count = keep}, lockDuration = lock_ms, attempts = attempts,
    maxMetricsSize = '', name = worker_name ~= '' and worker_name or nil})
  return bull_moveToFinished(${keysTableLua('moveToFinished')}, {job_id, now, 'returnvalue', returnvalue, 'completed', fetch, q.prefix, opts})
end
`,
  },
  // A job as moveToActive or moveToFinished hand it out ([hash pairs, id, …]): its data and attemptsMade (atm), or nil.
  jobData: {
    scripts: [],
    lua: `
local function bullmq_job_data(fetched)
  local fields = fetched[1]
  if type(fields) ~= 'table' then return nil end
  local data, atm
  for i = 1, #fields, 2 do
    if fields[i] == 'data' then data = fields[i + 1] elseif fields[i] == 'atm' then atm = fields[i + 1] end
  end
  return data, atm
end
`,
  },
  // The lean hop: a job added straight to the active list, locked, as BullMQ's addStandardJob +
  // moveToActive leave a step job (job hash, lists, lock, events), and the finish of the job that committed
  // as moveToFinished leaves it, without what a step job never has (a parent, children, deduplication,
  // metrics, a rate limiter). test/unit/bullmq-functions.test.ts checks that the lines copied here are still
  // BullMQ's; test/integration/lean-hop.test.ts compares what they leave with what BullMQ's scripts leave.
  leanHop: {
    scripts: [],
    lua: `
-- → the events maxlen once the job is added active (for bullmq_lean_finish), or false when the hop must go
-- BullMQ's way: a paused or limited queue, a job id that exists, or a current job (q.job) whose lock is
-- no longer token's (moveToFinished then reports the right code).
local function bullmq_lean_hop(q, id, name, data, opts, token, now, lock_ms, worker_name)
  local m = redis.call('HMGET', q.meta, 'paused', 'concurrency', 'max', 'opts.maxLenEvents')
  if m[1] or m[2] or m[3] then return false end
  if redis.call('GET', q.job .. ':lock') ~= token then return false end
  local job_key = q.prefix .. id
  if redis.call('EXISTS', job_key) == 1 then return false end
  local max_events = m[4]
  if not max_events then
    max_events = '10000'
    redis.call('HSET', q.meta, 'opts.maxLenEvents', max_events)
  end
  -- addStandardJob's storeJob (opts as its cjson.encode would write them, in another key order), then
  -- prepareJobForProcessing's processedOn, pb and ats.
  local fields = {'name', name, 'data', data, 'opts', '{"jobId":' .. cjson.encode(id) .. ',"attempts":' .. opts.attempts .. ',"backoff":' .. cjson.encode(opts.backoff) .. '}',
    'timestamp', now, 'delay', '0', 'priority', '0', 'processedOn', now}
  if worker_name ~= '' then
    fields[#fields + 1] = 'pb'
    fields[#fields + 1] = worker_name
  end
  fields[#fields + 1] = 'ats'
  fields[#fields + 1] = '1'
  redis.call('HSET', job_key, unpack(fields))
  redis.call('XADD', q.events, '*', 'event', 'added', 'jobId', id, 'name', name)
  redis.call('LPUSH', q.active, id)
  redis.call('SET', job_key .. ':lock', token, 'PX', lock_ms)
  -- 'eager' marks the hand-over in the queue's event stream (QueueEvents passes it on as args.eager).
  redis.call('XADD', q.events, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting', 'eager', '1')
  return max_events
end

-- moveToFinished of a completed job (q.job) whose lock bullmq_lean_hop saw token hold. keep: completed
-- jobs to keep (-1 all, 0 none). attempts_made: the job's attempts made before this one (its hash's atm,
-- which nothing changes while the lock is held): moveToFinished's HINCRBY of atm, folded into the HSET of
-- the kept job (one call fewer; a job not kept is deleted, atm and all). Deleting a job, only the keys a
-- step job can have: its hash and its logs — moveToFinished also deletes a parent's dependencies,
-- processed, failed and unsuccessful children, and step jobs have no children (four key lookups and ~300
-- bytes of AOF per step fewer). → 0, or -3 (not in the active list) as moveToFinished.
local function bullmq_lean_finish(q, job_id, now, max_events, keep, returnvalue, attempts_made)
  local job_key = q.job
  redis.call('DEL', job_key .. ':lock')
  redis.call('SREM', q.stalled, job_id)
  if redis.call('LREM', q.active, -1, job_id) < 1 then return -3 end
  if keep == 0 then
    redis.call('DEL', job_key, job_key .. ':logs')
  else
    redis.call('ZADD', q.completed, now, job_id)
    redis.call('HSET', job_key, 'returnvalue', returnvalue, 'finishedOn', now, 'atm', attempts_made + 1)
    if keep > 0 then
      local old = redis.call('ZREVRANGE', q.completed, keep, -1)
      if #old > 0 then
        for _, old_id in ipairs(old) do
          local old_key = q.prefix .. old_id
          redis.call('DEL', old_key, old_key .. ':logs')
        end
        redis.call('ZREMRANGEBYRANK', q.completed, 0, -(keep + 1))
      end
    end
  end
  -- moveToFinished trims the stream (XTRIM ~) before it emits; trimmed here by the same XADD (one call
  -- fewer): '~' trims whole nodes from the old end only, never the entries this script just added.
  redis.call('XADD', q.events, 'MAXLEN', '~', max_events, '*', 'event', 'completed', 'jobId', job_id, 'returnvalue', returnvalue, 'prev', 'active')
  return 0
end
`,
  },
  // Eager dispatch of a job just added: taken (active, locked with token) when it is the one BullMQ would
  // hand out next, on an unpaused queue with no global concurrency or rate limit. A prioritized job goes
  // only while nothing waits without a priority (BullMQ takes those first) and no prioritized job is more
  // urgent (the set's score is priority * 2^32 + a counter). → the job as takeJob's reply, or false.
  takeIfNext: {
    scripts: [],
    lua: `
local function bullmq_take_if_next(q, id, priority, token, lock_ms, now, worker_name)
  local m = redis.call('HMGET', q.meta, 'paused', 'concurrency', 'max')
  local next_up
  if priority > 0 then
    local head = redis.call('ZRANGE', q.prioritized, 0, 0, 'WITHSCORES')
    next_up = head[1] ~= nil and math.floor(tonumber(head[2]) / 0x100000000) >= priority and redis.call('LLEN', q.wait) == 0
      and redis.call('ZSCORE', q.prioritized, id) ~= false
  else
    next_up = redis.call('LINDEX', q.wait, 0) == id
  end
  if m[1] or m[2] or m[3] or not next_up then return false end
  if priority > 0 then redis.call('ZREM', q.prioritized, id) else redis.call('LPOP', q.wait) end
  redis.call('LPUSH', q.active, id)
  -- What BullMQ's prepareJobForProcessing does for a queue without a rate limiter.
  local job_key = q.prefix .. id
  redis.call('SET', job_key .. ':lock', token, 'PX', lock_ms)
  -- 'eager' marks the hand-over in the queue's event stream (QueueEvents passes it on as args.eager).
  redis.call('XADD', q.events, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting', 'eager', '1')
  if worker_name ~= '' then redis.call('HSET', job_key, 'processedOn', now, 'pb', worker_name) else redis.call('HSET', job_key, 'processedOn', now) end
  redis.call('HINCRBY', job_key, 'ats', 1)
  return {redis.call('HGETALL', job_key), id, 0, 0}
end
`,
  },
};

/** The Lua prelude of a script that uses `helpers`: BullMQ's scripts they call, wrapped, the named-keys builder, and the helpers. */
export function bullmqLua(helpers: BullmqLuaHelper[]): string {
  const scripts = [...new Set(helpers.flatMap((helper) => HELPERS[helper].scripts))];
  return `${bullmqFunctionsLua(scripts)}${queueKeysLua()}${helpers.map((helper) => HELPERS[helper].lua).join('')}`;
}
