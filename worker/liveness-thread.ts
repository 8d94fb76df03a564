import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker } from 'node:worker_threads';

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
  redisUrl: string;
  /** Keys to refresh: one per shard (Keys.alivePrefix(shard) + processId). */
  alivePrefixes: string[];
  intervalMs: number;
  ttlMs: number;
  /** A job lock's duration (AGENTQ_LOCK_DURATION_MS): what a renewal sets it to. */
  lockMs: number;
}

// Plain CommonJS, run with `eval: true`: no build step or loader needed in the thread. Lock renewals go
// one script per hash tag, so each stays in one Redis Cluster slot.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { Redis } = require('ioredis');
const { redisUrl, keys, intervalMs, ttlMs, lockMs } = workerData;
const RENEW = "for i = 1, #KEYS do if redis.call('GET', KEYS[i]) == ARGV[i + 1] then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end end return 1";
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
redis.on('error', () => {});
const locks = new Map();
let first = true;
const tagOf = (key) => { const open = key.indexOf('{'); const close = key.indexOf('}', open + 1); return open >= 0 && close > open ? key.slice(open, close + 1) : ''; };
const beat = async () => {
  try {
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.set(key, '1', 'PX', ttlMs);
    const byTag = new Map();
    for (const [key, token] of locks) {
      const tag = tagOf(key);
      if (!byTag.has(tag)) byTag.set(tag, [[], []]);
      byTag.get(tag)[0].push(key);
      byTag.get(tag)[1].push(token);
    }
    for (const [lockKeys, tokens] of byTag.values()) pipeline.eval(RENEW, lockKeys.length, ...lockKeys, lockMs, ...tokens);
    await pipeline.exec();
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
    try { await redis.del(...keys); } catch {}
    redis.disconnect();
    parentPort.postMessage('closed');
  }
});
`;

export function startLiveness({ redisUrl, alivePrefixes, intervalMs, ttlMs, lockMs }: LivenessOptions): Liveness {
  const processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const thread = new Worker(THREAD, { eval: true, workerData: { redisUrl, keys: alivePrefixes.map((prefix) => `${prefix}${processId}`), intervalMs, ttlMs, lockMs } });
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
