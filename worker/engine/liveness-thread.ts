import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_REDIS_URL } from '../../shared/config/config.js';
import type { RedisTarget } from '../../shared/adapters/redis/connect-redis.js';
import type { Worker as BullmqWorker } from 'bullmq';
import {
  JOB_LOCK_SUFFIX,
  LOCKS_OF_LUA,
  queueLockScope,
  RELEASE_LOCK_LUA,
  setWorkerId,
} from '../../shared/bullmq/bullmq-jobs.js';

/**
 * This worker process's liveness, kept by a `worker_threads` thread with its own Redis connection.
 * Every `intervalMs` it
 *  - sets the process's liveness key on every shard with a TTL of `ttlMs`, which claims on paid work
 *    (paid-claims.ts) check: a claim is not taken over while its owner is merely slow;
 *  - renews the locks of the step jobs this process holds (to `lockMs`), when a lock still holds this
 *    process's token: a blocked main thread, which cannot run BullMQ's own lock renewal, does not lose
 *    its jobs to the stalled-job check;
 *  - registers the process in the liveness registry and checks the other registered processes' liveness
 *    keys: a process whose key has lapsed is dead, and the thread deletes the locks it held on the
 *    queues in `reapQueues` (its BullMQ workers' tokens start with its process id: `ownedWorkerId`), so
 *    the stalled-job check hands its jobs on at its next pass. Recovery after kill -9 is then the
 *    liveness TTL plus a beat and a stall check (about 3-5 s) whatever the lock's length, and the lock can
 *    be long enough that no stall of the main thread loses it.
 * A busy main thread (a burst of intake, a long synchronous parse) cannot stop the thread; the death of
 * the process stops it.
 */
export interface Liveness {
  /** `<host>:<pid>:<random>`: names this process in the claims it holds. */
  readonly processId: string;
  /** Resolves once the first beat is written. */
  readonly ready: Promise<void>;
  /** Renew this job lock (its key and the token it must still hold) until `release`. */
  holdLock(lockKey: string, token: string): void;
  releaseLock(lockKey: string): void;
  close(): Promise<void>;
}

export interface LivenessOptions {
  /** Where Redis is (one Redis or a Cluster): the thread opens a connection of its own there. */
  redis: RedisTarget;
  /** Keys to refresh: one per shard (Keys.alivePrefix(shard) + processId). */
  alivePrefixes: string[];
  intervalMs: number;
  ttlMs: number;
  /** A job lock's duration (AGENTQ_LOCK_DURATION_MS): what a renewal sets it to. */
  lockMs: number;
  /** Keys.livenessRegistry(): the set of processes whose liveness the threads watch. */
  registryKey: string;
  /** BullMQ queue keys (`<prefix>:<queue name>`) this process's workers take jobs from: a dead process's locks are released there. */
  reapQueues: string[];
  /** The queues (BullMQ queue keys) whose jobs' locks this process holds through the thread: the step queues. */
  heldQueues: string[];
  /** Told when this thread found a dead process and released `released` of its job locks. */
  onReaped?: (processId: string, released: number) => void;
  /** Told when, after a reconnection, the thread released `released` locks of this process that nobody here held (replies lost with the connection). */
  onLost?: (released: number) => void;
}

/**
 * The id to give a BullMQ Worker of a process with a liveness thread: its job tokens (`<id>:<n>`) then
 * name the process, and the liveness threads of other processes can release its locks when it dies.
 */
function ownedWorkerId(processId: string): string {
  return `${processId}/${randomUUID()}`;
}

/** Gives a BullMQ Worker not yet running an `ownedWorkerId` (BullMQ makes its tokens from `id` when it runs). */
export function ownWorker<W extends BullmqWorker>(worker: W, processId: string | undefined): W {
  return processId ? setWorkerId(worker, ownedWorkerId(processId)) : worker;
}

// Plain CommonJS, run with `eval: true`: no build step or loader needed in the thread. Its connection
// is one Redis or a Cluster, as the process's (connectRedis; the thread cannot import it). Each beat is
// one pipeline per hash tag (a shard's liveness key and its locks), so on a Cluster each stays in one
// slot, and the pipelines of different shards go to their masters at once.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { Redis, Cluster } = require('ioredis');
const { redisUrl, clusterNodes, keys, intervalMs, ttlMs, lockMs, processId, registryKey, registryAlivePrefix, reapQueues, heldQueues } = workerData;
// Named in CLIENT LIST, so an operator (or a test) can tell the liveness connection of a process.
const connectionName = 'agentq-liveness-' + processId.replace(/[^A-Za-z0-9:._-]/g, '_');
const RENEW = "for i = 1, #KEYS do if redis.call('GET', KEYS[i]) == ARGV[i + 1] then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end end return 1";
// KEYS[1] a queue's active list; ARGV[1] its job key prefix, ARGV[2] a process's token prefix (the job
// keys share the queue's tag: one slot on a Cluster). Answers [job id, token, ...] of the locks that hold
// that process's tokens, and with ARGV[3] = 'del' deletes them too (a dead process's: reapDead). BullMQ's
// lock formats, from the seam (shared/bullmq/bullmq-jobs.ts).
const LOCKS_OF = ${JSON.stringify(LOCKS_OF_LUA)};
const RELEASE = ${JSON.stringify(RELEASE_LOCK_LUA)};
const LOCK_SUFFIX = ${JSON.stringify(JOB_LOCK_SUFFIX)};
const redis = clusterNodes
  ? new Cluster(clusterNodes, { redisOptions: { maxRetriesPerRequest: 1, connectionName }, enableOfflineQueue: true, slotsRefreshInterval: 1000, retryDelayOnClusterDown: 200, retryDelayOnTryAgain: 200, retryDelayOnFailover: 200 })
  : new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectionName });
redis.on('error', () => {});
const locks = new Map();
let first = true;
const tagOf = (key) => { const open = key.indexOf('{'); const close = key.indexOf('}', open + 1); return open >= 0 && close > open ? key.slice(open, close + 1) : ''; };
const beat = async () => {
  try {
    const byTag = new Map();
    const group = (key) => {
      const tag = tagOf(key);
      if (!byTag.has(tag)) byTag.set(tag, { alive: [], lockKeys: [], tokens: [] });
      return byTag.get(tag);
    };
    for (const key of keys) group(key).alive.push(key);
    for (const [key, token] of locks) {
      const entry = group(key);
      entry.lockKeys.push(key);
      entry.tokens.push(token);
    }
    await Promise.all([...byTag.values()].map(({ alive, lockKeys, tokens }) => {
      const pipeline = redis.pipeline();
      // PEXPIRE first: Redis refuses SET when it is full (maxmemory) but not PEXPIRE, so a live process
      // stays alive through it (otherwise its peers took its claims over and paid again).
      for (const key of alive) pipeline.pexpire(key, ttlMs).set(key, '1', 'PX', ttlMs);
      if (lockKeys.length > 0) pipeline.eval(RENEW, lockKeys.length, ...lockKeys, lockMs, ...tokens);
      return pipeline.exec();
    }));
    // A failed check must not keep the beat from saying it is ready: the next beat checks again.
    await reapDead().catch(() => undefined);
    await sweepLost().catch(() => undefined);
    if (first) { first = false; parentPort.postMessage('ready'); }
  } catch {}
};
// Every beat: register this process (again, should another thread have taken it for dead), and release
// the locks of registered processes whose liveness key has lapsed, then forget them.
const reapDead = async () => {
  const [[, members]] = await redis.pipeline().sadd(registryKey, processId).smembers(registryKey).exec().then((replies) => replies.slice(1));
  const others = members.filter((member) => member !== processId);
  if (others.length === 0) return;
  const alive = await redis.pipeline(others.map((member) => ['exists', registryAlivePrefix + member])).exec();
  const dead = others.filter((_member, index) => alive[index][1] === 0);
  for (const member of dead) {
    let released = 0;
    for (const queue of reapQueues) released += (await redis.eval(LOCKS_OF, 1, queue.activeKey, queue.jobKeyPrefix, member + '/', 'del')).length / 2;
    await redis.srem(registryKey, member);
    parentPort.postMessage({ reaped: member, released });
  }
};
// A step job taken just as the connection dropped (Redis restarted, a failover, a network blip) may be
// active under this process's token with its long take lock while the reply that named it was lost: no
// one here runs it, and it would wait out the take lock. After a reconnection, locks of this process's
// tokens on the step queues that the thread does not hold, on two looks two beats apart, are released.
let connections = 0;
let sweepAt = 0;
let suspects = null;
redis.on('ready', () => {
  connections += 1;
  if (connections > 1) { sweepAt = Date.now() + intervalMs; suspects = null; }
});
const unheldOwnLocks = async () => {
  const found = [];
  for (const queue of heldQueues) {
    const reply = await redis.eval(LOCKS_OF, 1, queue.activeKey, queue.jobKeyPrefix, processId + '/', 'keep');
    for (let i = 0; i < reply.length; i += 2) found.push([queue.jobKeyPrefix + reply[i] + LOCK_SUFFIX, reply[i + 1]]);
  }
  return found.filter(([key]) => !locks.has(key));
};
const sweepLost = async () => {
  if (sweepAt === 0 || Date.now() < sweepAt) return;
  if (suspects === null) {
    suspects = await unheldOwnLocks();
    sweepAt = suspects.length > 0 ? Date.now() + 2 * intervalMs : 0;
    if (suspects.length === 0) suspects = null;
    return;
  }
  const still = new Set((await unheldOwnLocks()).map(([key, token]) => key + ' ' + token));
  let released = 0;
  for (const [key, token] of suspects) if (still.has(key + ' ' + token)) released += await redis.eval(RELEASE, 1, key, token);
  suspects = null;
  sweepAt = 0;
  parentPort.postMessage({ lost: released });
};
// One beat at a time: a beat slower than the interval (a loaded machine, a failover) is not overlapped
// by the next, which would find the same dead process and release its locks a second time.
let beating = false;
const beatOnce = async () => {
  if (beating) return;
  beating = true;
  try { await beat(); } finally { beating = false; }
};
const timer = setInterval(beatOnce, intervalMs);
void beatOnce();
parentPort.on('message', async (message) => {
  if (message.locks) {
    for (const [key, token] of message.locks) {
      if (token === null) locks.delete(key);
      else locks.set(key, token);
    }
  } else if (message === 'close') {
    clearInterval(timer);
    // One DEL per key: the keys are on different shards' slots.
    try { await Promise.all([...keys.map((key) => redis.del(key)), redis.srem(registryKey, processId)]); } catch {}
    redis.disconnect();
    parentPort.postMessage('closed');
  }
});
`;

/** How soon the thread hears of a lock hold (see startLiveness). */
const HOLD_FLUSH_MS = 100;

export function startLiveness({
  redis,
  alivePrefixes,
  intervalMs,
  ttlMs,
  lockMs,
  registryKey,
  reapQueues,
  heldQueues,
  onReaped,
  onLost,
}: LivenessOptions): Liveness {
  const processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const workerData = {
    redisUrl: redis.redisUrl ?? DEFAULT_REDIS_URL,
    clusterNodes: redis.redisClusterNodes,
    keys: alivePrefixes.map((prefix) => `${prefix}${processId}`),
    intervalMs,
    ttlMs,
    lockMs,
    processId,
    registryKey,
    // The registry is checked against the liveness keys on its own tag (shard 0's).
    registryAlivePrefix: alivePrefixes[0],
    reapQueues: reapQueues.map(queueLockScope),
    heldQueues: heldQueues.map(queueLockScope),
  };
  const thread = new Worker(THREAD, { eval: true, workerData });
  // The thread must never keep a finished process alive.
  thread.unref();
  const ready = new Promise<void>((resolve, reject) => {
    thread.on('message', (message) => {
      if (message === 'ready') resolve();
    });
    thread.once('error', reject);
  });
  thread.on('message', (message: { reaped?: string; released?: number; lost?: number }) => {
    if (message.reaped) onReaped?.(message.reaped, message.released ?? 0);
    if (message.lost !== undefined) onLost?.(message.lost);
  });
  ready.catch(() => undefined);
  // The thread learns of holds and releases at most every HOLD_FLUSH_MS, in one message: a message per
  // turn cost ~10 % of a busy worker's main-thread CPU (about one per step at 100 steps in flight), and a
  // hold that ends before the next flush (most steps) never needs to reach the thread at all. Until the
  // thread holds a lock, the take lock (AGENTQ_TAKE_LOCK_MS, 30 s) covers the job; the thread's sweep of
  // unheld own locks looks twice, two beats apart, so a hold 100 ms late is never taken for lost. A
  // release needs no haste: the thread renews a lock only while it still holds this process's token,
  // and a finished job's lock is deleted.
  const held = new Map<string, string>();
  const told = new Map<string, string>();
  let flushTimer: NodeJS.Timeout | undefined;
  const flush = () => {
    flushTimer = undefined;
    const locks: [string, string | null][] = [];
    for (const [lockKey, token] of held) {
      if (told.get(lockKey) !== token) {
        told.set(lockKey, token);
        locks.push([lockKey, token]);
      }
    }
    for (const lockKey of told.keys()) {
      if (!held.has(lockKey)) {
        told.delete(lockKey);
        locks.push([lockKey, null]);
      }
    }
    if (locks.length > 0) thread.postMessage({ locks });
  };
  const changed = () => {
    if (flushTimer) return;
    flushTimer = setTimeout(flush, HOLD_FLUSH_MS);
    flushTimer.unref();
  };
  return {
    processId,
    ready,
    holdLock(lockKey, token) {
      held.set(lockKey, token);
      changed();
    },
    releaseLock(lockKey) {
      held.delete(lockKey);
      // Nothing to tell when the thread never heard of the hold.
      if (told.has(lockKey)) changed();
    },
    async close() {
      if (flushTimer) clearTimeout(flushTimer);
      const closed = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        thread.on('message', (message) => {
          if (message === 'closed') {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      thread.postMessage('close');
      await closed;
      await thread.terminate();
    },
  };
}
