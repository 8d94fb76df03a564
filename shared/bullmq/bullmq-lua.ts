import { bullmqFunctionsLua, type BullmqScriptName } from './bullmq-functions.js';
import { keysTableLua, queueKeysLua } from './bullmq-keys.js';
import { luaScript } from '../redis/lua-script.js';

/**
 * The Lua agentq's own scripts call to act on a BullMQ queue, by name: each helper below takes the queue's
 * named keys (`q`, from `bullmq_queue_keys(prefix, job_id)`) and plain arguments, and knows BullMQ's
 * KEYS/ARGV layouts, its msgpack'd options, its job hash fields, its lock and event formats. The scripts of
 * the run store (shared/store/step-transition-scripts.ts) use only these names.
 *
 * Job options (`opts`) are a Lua table in BullMQ's public JobsOptions names: `jobId`, `attempts`, `backoff`,
 * and `priority` (only when > 0).
 */
type BullmqLuaHelper = 'addJob' | 'takeJob' | 'completeJob' | 'jobData' | 'leanHop' | 'takeIfNext' | 'priorities';

const HELPERS: Record<BullmqLuaHelper, { scripts: BullmqScriptName[]; lua: string }> = {
  // Queue.add of one job: BullMQ's addPrioritizedJob for a priority > 0, else addStandardJob. → the job id.
  addJob: {
    scripts: ['addStandardJob', 'addPrioritizedJob'],
    lua: luaScript(new URL('./lua/add-job.lua', import.meta.url), {
      KEYS_addPrioritizedJob: keysTableLua('addPrioritizedJob'),
      KEYS_addStandardJob: keysTableLua('addStandardJob'),
    }),
  },
  // A worker's fetch (BullMQ's moveToActive), the job locked with token. → [job hash pairs, id, rate-limit delay, delay until]
  takeJob: {
    scripts: ['moveToActive'],
    lua: luaScript(new URL('./lua/take-job.lua', import.meta.url), { KEYS_moveToActive: keysTableLua('moveToActive') }),
  },
  // Completing a job a worker holds (BullMQ's moveToFinished, target completed), keeping keep completed
  // jobs (-1 all), and with fetch '1' taking the next job of the queue. → 0 or the next job as takeJob's
  // reply, or BullMQ's negative code (-2 missing, -3 not active, -6 lock lost, …).
  completeJob: {
    scripts: ['moveToFinished'],
    lua: luaScript(new URL('./lua/complete-job.lua', import.meta.url), {
      KEYS_moveToFinished: keysTableLua('moveToFinished'),
    }),
  },
  // A job as moveToActive or moveToFinished hand it out ([hash pairs, id, …]): its data and attemptsMade (atm), or nil.
  jobData: {
    scripts: [],
    lua: luaScript(new URL('./lua/job-data.lua', import.meta.url)),
  },
  // The lean hop: a job added straight to the active list, locked, as BullMQ's addStandardJob +
  // moveToActive leave a step job (job hash, lists, lock, events), and the finish of the job that committed
  // as moveToFinished leaves it, without what a step job never has (a parent, children, deduplication,
  // metrics, a rate limiter). test/unit/bullmq-functions.test.ts checks that the lines copied here are still
  // BullMQ's; test/integration/lean-hop.test.ts compares what they leave with what BullMQ's scripts leave.
  leanHop: {
    scripts: [],
    lua: luaScript(new URL('./lua/lean-hop.lua', import.meta.url)),
  },
  // Eager dispatch of a job just added: taken (active, locked with token) when it is the one BullMQ would
  // hand out next, on an unpaused queue with no global concurrency or rate limit. A prioritized job goes
  // only while nothing waits without a priority (BullMQ takes those first) and no prioritized job is more
  // urgent (the set's score is priority * 2^32 + a counter). → the job as takeJob's reply, or false.
  takeIfNext: {
    scripts: [],
    lua: luaScript(new URL('./lua/take-if-next.lua', import.meta.url)),
  },
  // What weighted fairness reads and rewrites of the prioritized set: whether anything waits, the most
  // urgent priority, and every priority lowered by an amount (the fair queue's rebase).
  priorities: {
    scripts: [],
    lua: luaScript(new URL('./lua/priorities.lua', import.meta.url)),
  },
};

/** The Lua prelude of a script that uses `helpers`: BullMQ's scripts they call, wrapped, the named-keys builder, and the helpers. */
export function bullmqLua(helpers: BullmqLuaHelper[]): string {
  const scripts = [...new Set(helpers.flatMap((helper) => HELPERS[helper].scripts))];
  return `${bullmqFunctionsLua(scripts)}${queueKeysLua()}${helpers.map((helper) => HELPERS[helper].lua).join('')}`;
}
