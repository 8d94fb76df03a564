import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_REDIS_URL } from '../../shared/config/config.js';
import type { RedisConnection, RedisTarget } from '../../shared/redis/connect-redis.js';
import type { Worker as BullmqWorker } from 'bullmq';
import {
  JOB_LOCK_SUFFIX,
  LOCKS_OF_LUA,
  queueLockScope,
  queueReapScope,
  reapJobsLua,
  RELEASE_LOCK_LUA,
  setWorkerId,
} from '../../shared/bullmq/bullmq-jobs.js';
import { luaScript } from '../../shared/redis/lua-script.js';
import { threadModuleUrl } from '../../shared/contracts/thread-module.js';
import type { LivenessThreadData, LivenessThreadMessage } from './liveness-beat.js';
import { reapDead } from './reap-dead.js';

/** Renews the locks the thread holds, each while it still holds this process's token (one call per beat and tag). */
const RENEW_HELD_LOCKS = luaScript(new URL('./lua/renew-held-locks-n.lua', import.meta.url));

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
 *    the stalled-job check hands its jobs on at its next pass; on the queues of `stalledCheck` the thread
 *    runs that check itself at once, so the jobs are back in wait as the locks go. Recovery after kill -9
 *    is then the liveness TTL plus a beat (a process of the same machine: its first beat) whatever the
 *    lock's length, and the lock can be long enough that no stall of the main thread loses it.
 * A busy main thread (a burst of intake, a long synchronous parse) cannot stop the thread; the death of
 * the process stops it. The thread is the module liveness-beat.ts, started from its compiled file.
 */
export interface Liveness {
  /** `<host>:<pid>:<random>`: names this process in the claims it holds. */
  readonly processId: string;
  /** Resolves once the thread's first beat is written. */
  readonly ready: Promise<void>;
  /**
   * Writes what a beat of the thread writes for this process — its liveness keys, with the same value
   * and TTL, then its entry in the registry — through `redis`, from the calling thread, and reaps dead
   * peers as the beat does: the process is alive to its peers, and a dead peer's jobs are back in wait,
   * before its thread has booted, whose beats then carry on over the same keys.
   */
  beatHere(redis: RedisConnection): Promise<void>;
  /** Renew this job lock (its key and the token it must still hold) until `release`. */
  holdLock(lockKey: string, token: string): void;
  releaseLock(lockKey: string): void;
  /** The process's data connections fail (true: the thread stops beating) or answer again (false). */
  dataPathFailing(failing: boolean): void;
  /**
   * Runs a script on the thread's own connection: what must reach Redis when the data connections do not
   * (a paid result's save, lest a peer taking the step over pay for it again). Rejects with Redis's error.
   */
  runScript(lua: string, keys: string[], args: (string | number)[]): Promise<void>;
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
  /**
   * Queues of `reapQueues` whose dead process's jobs go back to wait as their locks are released (BullMQ's
   * stalled check, run by the thread with the settings the queues' workers have), not at the workers' next
   * check. The others' jobs wait for that check.
   */
  stalledCheck?: { queues: string[]; maxStalledCount: number; intervalMs: number };
  /** Told when this thread found a dead process and released `released` of its job locks. */
  onReaped?: (processId: string, released: number) => void;
  /** Told when, after a reconnection, the thread released `released` locks of this process that nobody here held (replies lost with the connection). */
  onLost?: (released: number) => void;
  /** The thread's module. @default liveness-beat.ts's, compiled (tests give one that boots slowly, or never) */
  threadModule?: URL;
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

/**
 * This boot of this machine and this process's pid namespace (Linux: the kernel's boot id and the
 * namespace's inode), written as the value of the liveness keys; '' where they cannot be read. Another
 * process that reads the same value, and the same host name in the process id, can ask the kernel
 * whether a peer's pid still runs (the thread's reapDead): a worker restarted on the machine of one
 * killed finds it gone at once, not after its liveness key lapses (AGENTQ_LIVENESS_TTL_MS).
 */
export function machineIdentity(): string {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return `${boot}/${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return '';
  }
}

/**
 * Liveness.beatHere: a process's liveness keys as its thread's beat sets them, then its registry entry
 * (the keys first: a peer that finds the process registered without its key takes it for dead), then the
 * thread's reap of dead peers, so that a worker started after a crash gets the dead one's steps back in
 * wait before it takes jobs rather than once its thread is up (a failed reap is the thread's to do again).
 */
async function beatFrom(
  connection: RedisConnection,
  data: LivenessThreadData,
  onReaped: (member: string, released: number) => void,
): Promise<void> {
  const { keys, machine, ttlMs, registryKey, processId } = data;
  await Promise.all(keys.map((key) => connection.set(key, machine || '1', 'PX', ttlMs)));
  await connection.sadd(registryKey, processId);
  await reapDead(connection, data, onReaped).catch(() => undefined);
}

/** How soon the thread hears of a lock hold (see startLiveness). */
const HOLD_FLUSH_MS = 100;

/** What the thread of `processId` is started with. */
function threadData(
  {
    redis,
    alivePrefixes,
    intervalMs,
    ttlMs,
    lockMs,
    registryKey,
    reapQueues,
    heldQueues,
    stalledCheck,
  }: LivenessOptions,
  processId: string,
): LivenessThreadData {
  return {
    redisUrl: redis.redisUrl ?? DEFAULT_REDIS_URL,
    clusterNodes: redis.redisClusterNodes,
    keys: alivePrefixes.map((prefix) => `${prefix}${processId}`),
    intervalMs,
    ttlMs,
    lockMs,
    processId,
    machine: machineIdentity(),
    registryKey,
    // The registry is checked against the liveness keys on its own tag (shard 0's).
    registryAlivePrefix: alivePrefixes[0] ?? '',
    reapQueues: reapQueues.map((queue) =>
      stalledCheck?.queues.includes(queue) ? queueReapScope(queue, stalledCheck) : queueLockScope(queue),
    ),
    heldQueues: heldQueues.map(queueLockScope),
    renewLua: RENEW_HELD_LOCKS,
    locksOfLua: LOCKS_OF_LUA,
    reapLua: stalledCheck ? reapJobsLua() : '',
    releaseLua: RELEASE_LOCK_LUA,
    lockSuffix: JOB_LOCK_SUFFIX,
  };
}

export function startLiveness(options: LivenessOptions): Liveness {
  const { onReaped, onLost } = options;
  const threadModule = options.threadModule ?? threadModuleUrl('liveness-beat', import.meta.url);
  const processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const workerData = threadData(options, processId);
  const thread = new Worker(threadModule, { workerData });
  // The thread must never keep a finished process alive.
  thread.unref();
  const ready = new Promise<void>((resolve, reject) => {
    thread.on('message', (message) => {
      if (message === 'ready') resolve();
    });
    thread.once('error', reject);
  });
  const runs = new Map<number, { resolve(): void; reject(error: Error): void }>();
  let runIds = 0;
  thread.on('message', (message: LivenessThreadMessage) => {
    if (typeof message !== 'object') return;
    if ('ran' in message) {
      const run = runs.get(message.ran);
      runs.delete(message.ran);
      if (message.error === undefined) run?.resolve();
      else run?.reject(new Error(message.error));
    } else if ('reaped' in message) onReaped?.(message.reaped, message.released);
    else onLost?.(message.lost);
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
    beatHere: (connection) => beatFrom(connection, workerData, (member, released) => onReaped?.(member, released)),
    holdLock(lockKey, token) {
      held.set(lockKey, token);
      changed();
    },
    releaseLock(lockKey) {
      held.delete(lockKey);
      // Nothing to tell when the thread never heard of the hold.
      if (told.has(lockKey)) changed();
    },
    dataPathFailing(failing) {
      thread.postMessage({ dataPathFailing: failing });
    },
    runScript(lua, keys, args) {
      const id = (runIds += 1);
      return new Promise<void>((resolve, reject) => {
        runs.set(id, { resolve, reject });
        thread.postMessage({ run: { id, lua, keys, args } });
      });
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
      for (const run of runs.values()) run.reject(new Error('the liveness thread is closed'));
      runs.clear();
      await thread.terminate();
    },
  };
}
