import { raw2NextJobData, type Worker } from 'bullmq';
import { luaScript } from '../redis/lua-script.js';
import { bullmqFunctionsLua } from './bullmq-functions.js';

/**
 * BullMQ's formats for jobs and their locks, as agentq relies on them outside BullMQ's own code: the lock
 * key and token, the active list, the job JSON a worker makes a Job from. BULLMQ_VERSION's formats; the
 * guards are named in shared/bullmq/README.md.
 */

/** A job's lock is `<job key>:lock` (BullMQ's moveToActive: `jobKey .. ':lock'`). */
export const JOB_LOCK_SUFFIX = ':lock';

/** The lock key of the job whose key (`<prefix>:<queue>:<id>`, Worker.toKey(id)) is `jobKey`. */
export function jobLockKey(jobKey: string): string {
  return jobKey + JOB_LOCK_SUFFIX;
}

/**
 * Where the locks of a queue's active jobs are: its active list, and the prefix its job keys start with
 * (`<prefix>:<queue>:`; a job's key is that + its id). What a liveness thread scans for a process's locks.
 */
interface QueueLockScope {
  activeKey: string;
  jobKeyPrefix: string;
}

/** `queue`: the queue's qualified name, `<prefix>:<queue>` (queueQualifiedName). */
export function queueLockScope(queue: string): QueueLockScope {
  return { activeKey: `${queue}:active`, jobKeyPrefix: `${queue}:` };
}

/**
 * Gives a Worker not yet running the id its job tokens are made from: BullMQ's main loop makes each
 * fetch's token `${worker.id}:${n}` (Worker.mainLoop), so every lock the worker holds starts with its id.
 * `id` is read-only in BullMQ's types but read only when the loop runs.
 */
export function setWorkerId<W extends Worker>(worker: W, id: string): W {
  (worker as { id: string }).id = id;
  return worker;
}

/** A job as a script of BullMQ's hands it out (`[hash pairs, id, rate-limit delay, delay until]`), as a worker's nextJobFromJobData takes it. */
export function nextJobData(raw: unknown[]): unknown[] {
  return raw2NextJobData(raw);
}

/** A job the lean hop (bullmq_lean_hop) wrote, as BullMQ's rawToJobJson reads its hash. */
interface LeanJob {
  id: string;
  name: string;
  /** The job's data, JSON. */
  data: string;
  attempts: number;
  /** The job options' backoff (written to its hash as `opts.backoff`). */
  backoff: { type: string };
  /** The script's `now`: the job's timestamp and processedOn. */
  now: number;
  /** The worker's name (`pb`), if it has one. */
  workerName?: string;
}

/**
 * The job JSON (`[json, id, 0, 0]`, as nextJobData gives it) of a job bullmq_lean_hop added, made from what
 * the script was told rather than read back: test/integration/lean-hop.test.ts compares it with Redis.
 */
export function leanJobData({ id, name, data, attempts, backoff, now, workerName }: LeanJob): unknown[] {
  const json = {
    name,
    data,
    opts: { jobId: id, attempts, backoff },
    progress: 0,
    delay: 0,
    priority: 0,
    timestamp: now,
    attemptsStarted: 1,
    attemptsMade: 0,
    stalledCounter: 0,
    processedOn: now,
    ...(workerName ? { processedBy: workerName } : {}),
  };
  return [json, id, 0, 0];
}

/** Lua: delete KEYS[1] (a job's lock) if it still holds token ARGV[1] (BullMQ's releaseLock). → 1 released, 0 not. */
export const RELEASE_LOCK_LUA = luaScript(new URL('./lua/release-lock-1.lua', import.meta.url));

/**
 * Lua: the locks of a queue's active jobs whose token starts with ARGV[2] (a worker id prefix: BullMQ's
 * tokens start with their worker's id). KEYS[1] the active list, ARGV[1] the job key prefix
 * (queueLockScope); ARGV[3] 'del' deletes them too. → [job id, token, …]
 */
export const LOCKS_OF_LUA = luaScript(new URL('./lua/locks-of-1.lua', import.meta.url), { JOB_LOCK_SUFFIX });

/** A queue's keys that BullMQ's stalled check (moveStalledJobsToWait) takes, in its KEYS order. */
const STALLED_CHECK_KEYS = [
  'stalled',
  'wait',
  'active',
  'stalled-check',
  'meta',
  'paused',
  'marker',
  'events',
  'repeat',
];

/**
 * What a liveness thread needs to put a dead process's jobs of `queue` (`<prefix>:<queue>`) back to wait at
 * once: the keys REAP_JOBS_LUA takes, and the settings of the queue's workers its stalled check runs with.
 */
export interface QueueReapScope extends QueueLockScope {
  stalledCheck: { keys: string[]; maxStalledCount: number; intervalMs: number };
}

export function queueReapScope(
  queue: string,
  { maxStalledCount, intervalMs }: { maxStalledCount: number; intervalMs: number },
): QueueReapScope {
  return {
    ...queueLockScope(queue),
    stalledCheck: { keys: STALLED_CHECK_KEYS.map((name) => `${queue}:${name}`), maxStalledCount, intervalMs },
  };
}

let reapJobs: string | undefined;

/**
 * Lua (lua/reap-jobs-9.lua): a dead process's jobs of one queue back to wait at once, by BullMQ's own
 * stalled check run now. KEYS a QueueReapScope's `stalledCheck.keys`; ARGV maxStalledCount, the job key
 * prefix, now, the check interval, the token prefix. → [job id, token, …] of the locks deleted.
 * Made on first use: it carries BullMQ's script, read from its package.
 */
export function reapJobsLua(): string {
  reapJobs ??= luaScript(new URL('./lua/reap-jobs-9.lua', import.meta.url), {
    JOB_LOCK_SUFFIX,
    BULLMQ_FUNCTIONS: bullmqFunctionsLua(['moveStalledJobsToWait']),
  });
  return reapJobs;
}
