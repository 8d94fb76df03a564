import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * This worker process's liveness, proven from a `worker_threads` thread with its own Redis connection
 * (issue 20): every `intervalMs` it sets the process's liveness key on every shard with a TTL of `ttlMs`.
 * A busy main thread (a burst of intake, a long synchronous parse) cannot stop it, so a claim on paid work
 * (step-claims.ts) is not taken over while its owner is merely slow; it stops when the process dies, so
 * the claim lapses within `ttlMs`.
 */
export interface Liveness {
  /** `<host>:<pid>:<random>`: names this process in the claims it holds. */
  readonly processId: string;
  /** Resolves once the first beat is written. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface LivenessOptions {
  redisUrl: string;
  /** Keys to refresh: one per shard (Keys.alivePrefix(shard) + processId). */
  alivePrefixes: string[];
  intervalMs: number;
  ttlMs: number;
}

// Plain CommonJS, run with `eval: true`: no build step or loader needed in the thread.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { Redis } = require('ioredis');
const { redisUrl, keys, intervalMs, ttlMs } = workerData;
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
redis.on('error', () => {});
let first = true;
const beat = async () => {
  try {
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.set(key, '1', 'PX', ttlMs);
    await pipeline.exec();
    if (first) { first = false; parentPort.postMessage('ready'); }
  } catch {}
};
const timer = setInterval(beat, intervalMs);
void beat();
parentPort.on('message', async (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  try { await redis.del(...keys); } catch {}
  redis.disconnect();
  parentPort.postMessage('closed');
});
`;

export function startLiveness({ redisUrl, alivePrefixes, intervalMs, ttlMs }: LivenessOptions): Liveness {
  const processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const thread = new Worker(THREAD, { eval: true, workerData: { redisUrl, keys: alivePrefixes.map((prefix) => `${prefix}${processId}`), intervalMs, ttlMs } });
  // The thread must never keep a finished process alive.
  thread.unref();
  const ready = new Promise<void>((resolve, reject) => {
    thread.once('message', () => resolve());
    thread.once('error', reject);
  });
  ready.catch(() => undefined);
  return {
    processId,
    ready,
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
