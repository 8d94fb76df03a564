import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_REDIS_URL } from '../shared/config.js';
import type { RedisTarget } from '../shared/redis/connect-redis.js';

/**
 * This worker process's liveness, kept by a `worker_threads` thread with its own Redis connection
 * (issue 20). Every `intervalMs` it
 *  - sets the process's liveness key on every shard with a TTL of `ttlMs`, which claims on paid work
 *    (paid-claims.ts) check: a claim is not taken over while its owner is merely slow;
 *  - renews the locks of the step jobs this process holds (to `lockMs`), when a lock still holds this
 *    process's token: a blocked main thread, which cannot run BullMQ's own lock renewal, does not lose
 *    its jobs to the stalled-job check, while a dead process's locks run out within `lockMs`.
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
}

// Plain CommonJS, run with `eval: true`: no build step or loader needed in the thread. Its connection
// is one Redis or a Cluster, as the process's (connectRedis; the thread cannot import it). Each beat is
// one pipeline per hash tag (a shard's liveness key and its locks), so on a Cluster each stays in one
// slot, and the pipelines of different shards go to their masters at once.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { Redis, Cluster } = require('ioredis');
const { redisUrl, clusterNodes, keys, intervalMs, ttlMs, lockMs } = workerData;
const RENEW = "for i = 1, #KEYS do if redis.call('GET', KEYS[i]) == ARGV[i + 1] then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end end return 1";
const redis = clusterNodes
  ? new Cluster(clusterNodes, { redisOptions: { maxRetriesPerRequest: 1 }, enableOfflineQueue: true, slotsRefreshInterval: 1000, retryDelayOnClusterDown: 200, retryDelayOnTryAgain: 200, retryDelayOnFailover: 200 })
  : new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
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
      for (const key of alive) pipeline.set(key, '1', 'PX', ttlMs);
      if (lockKeys.length > 0) pipeline.eval(RENEW, lockKeys.length, ...lockKeys, lockMs, ...tokens);
      return pipeline.exec();
    }));
    if (first) { first = false; parentPort.postMessage('ready'); }
  } catch {}
};
const timer = setInterval(beat, intervalMs);
void beat();
parentPort.on('message', async (message) => {
  if (message.locks) {
    for (const [key, token] of message.locks) {
      if (token === null) locks.delete(key);
      else locks.set(key, token);
    }
  } else if (message === 'close') {
    clearInterval(timer);
    // One DEL per key: the keys are on different shards' slots.
    try { await Promise.all(keys.map((key) => redis.del(key))); } catch {}
    redis.disconnect();
    parentPort.postMessage('closed');
  }
});
`;

export function startLiveness({ redis, alivePrefixes, intervalMs, ttlMs, lockMs }: LivenessOptions): Liveness {
  const processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const thread = new Worker(THREAD, { eval: true, workerData: { redisUrl: redis.redisUrl ?? DEFAULT_REDIS_URL, clusterNodes: redis.redisClusterNodes, keys: alivePrefixes.map((prefix) => `${prefix}${processId}`), intervalMs, ttlMs, lockMs } });
  // The thread must never keep a finished process alive.
  thread.unref();
  const ready = new Promise<void>((resolve, reject) => {
    thread.once('message', () => resolve());
    thread.once('error', reject);
  });
  ready.catch(() => undefined);
  // Holds and releases go to the thread in one message per turn: thousands of job starts at once would
  // otherwise pay a postMessage each (measured: 5 % of a worker's CPU in a 10,000-run burst).
  let pending: [string, string | null][] = [];
  const queue = (lockKey: string, token: string | null) => {
    if (pending.length === 0) {
      setImmediate(() => {
        const locks = pending;
        pending = [];
        thread.postMessage({ locks });
      });
    }
    pending.push([lockKey, token]);
  };
  return {
    processId,
    ready,
    holdLock(lockKey, token) {
      queue(lockKey, token);
    },
    releaseLock(lockKey) {
      queue(lockKey, null);
    },
    async close() {
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
