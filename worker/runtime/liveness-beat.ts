/**
 * The liveness thread (started by liveness-thread.ts, which says what it keeps): a `worker_threads`
 * module with its own Redis connection, one Redis or a Cluster as the process's. It imports nothing of
 * agentq's but the reap it shares with its parent (reap-dead.ts), so it starts fast: the Lua it runs and BullMQ's lock formats come in its workerData, from the
 * seam (shared/bullmq/bullmq-jobs.ts). Each beat is one pipeline per hash tag (a shard's liveness key and
 * its locks), so on a Cluster each stays in one slot, and the pipelines of different shards go to their
 * masters at once.
 */
import { Cluster, Redis } from 'ioredis';
import { parentPort, workerData } from 'node:worker_threads';
import { locksOf, reapDead, type QueueScope, type ReapScope } from './reap-dead.js';

/** What the thread is started with: what a reap needs (ReapScope: the keys, registry, queues and their Lua), and the rest. */
export interface LivenessThreadData extends ReapScope {
  redisUrl: string;
  clusterNodes?: { host: string; port: number }[];
  intervalMs: number;
  ttlMs: number;
  lockMs: number;
  /** A queue's active list and job key prefix (queueLockScope): the step queues whose locks the thread holds. */
  heldQueues: QueueScope[];
  /** lua/renew-held-locks-n.lua and the seam's RELEASE_LOCK_LUA. */
  renewLua: string;
  releaseLua: string;
  /** BullMQ's job lock key suffix (JOB_LOCK_SUFFIX). */
  lockSuffix: string;
}

/** What the thread tells its parent. */
export type LivenessThreadMessage =
  'ready' | 'closed' | { reaped: string; released: number } | { lost: number } | { ran: number; error?: string };

/**
 * What the parent tells the thread: lock holds (token) and releases (null), whether the process's own
 * data connections are failing (`dataPathFailing`: the thread stops beating meanwhile), or 'close'.
 */
export type LivenessParentMessage =
  'close' | { locks: [string, string | null][] } | { dataPathFailing: boolean } | { run: LivenessScript };

/** A script the parent asks the thread to run on its connection (`id` names the answer: `ran`). */
interface LivenessScript {
  id: number;
  lua: string;
  keys: string[];
  args: (string | number)[];
}

const port = parentPort!;
const data = workerData as LivenessThreadData;
const { keys, intervalMs, ttlMs, lockMs, processId, registryKey, heldQueues } = data;
const post = (message: LivenessThreadMessage) => port.postMessage(message);
// Named in CLIENT LIST, so an operator (or a test) can tell the liveness connection of a process.
const connectionName = 'agentq-liveness-' + processId.replace(/[^A-Za-z0-9:._-]/g, '_');
const redis: Redis | Cluster = data.clusterNodes
  ? new Cluster(data.clusterNodes, {
      redisOptions: { maxRetriesPerRequest: 1, connectionName },
      enableOfflineQueue: true,
      slotsRefreshInterval: 1000,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 200,
      retryDelayOnFailover: 200,
    })
  : new Redis(data.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectionName });
redis.on('error', () => undefined);
const locks = new Map<string, string>();
let first = true;

function tagOf(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open ? key.slice(open, close + 1) : '';
}

// While the process's data connections fail (the parent says so), a beat would vouch for steps the
// process cannot commit: the thread writes nothing, renews no lock and reaps no one, so its liveness key
// lapses and its peers release its locks and take its steps over.
let withdrawn = false;

async function beat(): Promise<void> {
  if (withdrawn) return;
  try {
    const byTag = new Map<string, { alive: string[]; lockKeys: string[]; tokens: string[] }>();
    const group = (key: string) => {
      const tag = tagOf(key);
      let entry = byTag.get(tag);
      if (!entry) byTag.set(tag, (entry = { alive: [], lockKeys: [], tokens: [] }));
      return entry;
    };
    for (const key of keys) group(key).alive.push(key);
    for (const [key, token] of locks) {
      const entry = group(key);
      entry.lockKeys.push(key);
      entry.tokens.push(token);
    }
    await Promise.all(
      [...byTag.values()].map(({ alive, lockKeys, tokens }) => {
        const pipeline = redis.pipeline();
        // PEXPIRE first: Redis refuses SET when it is full (maxmemory) but not PEXPIRE, so a live process
        // stays alive through it (otherwise its peers took its claims over and paid again).
        for (const key of alive) pipeline.pexpire(key, ttlMs).set(key, data.machine || '1', 'PX', ttlMs);
        if (lockKeys.length > 0) pipeline.eval(data.renewLua, lockKeys.length, ...lockKeys, lockMs, ...tokens);
        return pipeline.exec();
      }),
    );
    // A failed check must not keep the beat from saying it is ready: the next beat checks again.
    await reapDead(redis, data, (reaped, released) => post({ reaped, released })).catch(() => undefined);
    await sweepLost().catch(() => undefined);
    if (first) {
      first = false;
      post('ready');
    }
  } catch {
    // Redis is away: the next beat tries again.
  }
}

// A step job taken just as the connection dropped (Redis restarted, a failover, a network blip) may be
// active under this process's token with its long take lock while the reply that named it was lost: no
// one here runs it, and it would wait out the take lock. After a reconnection, locks of this process's
// tokens on the step queues that the thread does not hold, on two looks two beats apart, are released.
let connections = 0;
let sweepAt = 0;
let suspects: [string, string][] | null = null;
redis.on('ready', () => {
  connections += 1;
  if (connections > 1) {
    sweepAt = Date.now() + intervalMs;
    suspects = null;
  }
});

async function unheldOwnLocks(): Promise<[string, string][]> {
  const found: [string, string][] = [];
  for (const queue of heldQueues) {
    const reply = await locksOf(redis, data, queue, processId + '/', 'keep');
    for (let i = 0; i < reply.length; i += 2)
      found.push([queue.jobKeyPrefix + reply[i]! + data.lockSuffix, reply[i + 1]!]);
  }
  return found.filter(([key]) => !locks.has(key));
}

async function sweepLost(): Promise<void> {
  if (sweepAt === 0 || Date.now() < sweepAt) return;
  if (suspects === null) {
    const found = await unheldOwnLocks();
    sweepAt = found.length > 0 ? Date.now() + 2 * intervalMs : 0;
    suspects = found.length > 0 ? found : null;
    return;
  }
  const still = new Set((await unheldOwnLocks()).map(([key, token]) => key + ' ' + token));
  let released = 0;
  for (const [key, token] of suspects)
    if (still.has(key + ' ' + token)) released += (await redis.eval(data.releaseLua, 1, key, token)) as number;
  suspects = null;
  sweepAt = 0;
  post({ lost: released });
}

// One beat at a time: a beat slower than the interval (a loaded machine, a failover) is not overlapped
// by the next, which would find the same dead process and release its locks a second time.
let beating = false;
async function beatOnce(): Promise<void> {
  if (beating) return;
  beating = true;
  try {
    await beat();
  } finally {
    beating = false;
  }
}

// Scripts the parent could not get through its own connections (a paid result's save), so that a peer
// taking its steps over finds the result saved rather than paying for it again.
function runForParent({ id, lua, keys: scriptKeys, args }: LivenessScript): void {
  redis.eval(lua, scriptKeys.length, ...scriptKeys, ...args).then(
    () => post({ ran: id }),
    (error: unknown) => post({ ran: id, error: error instanceof Error ? error.message : String(error) }),
  );
}

// The liveness keys are left to lapse (AGENTQ_LIVENESS_TTL_MS), not deleted: the saves of paid calls
// that were in flight when the data path failed get that long to arrive here before peers take over.
function withdraw(failing: boolean): void {
  if (failing === withdrawn) return;
  withdrawn = failing;
  if (failing) return;
  // Back: a take the process sent before the fault may have landed after it (its reply lost to a
  // timeout), leaving a job active under this process's token that no one here runs; look for such
  // locks as after a reconnection.
  sweepAt = Date.now() + intervalMs;
  suspects = null;
  void beatOnce();
}

const timer = setInterval(() => void beatOnce(), intervalMs);
void beatOnce();
port.on('message', (message: LivenessParentMessage) => {
  if (message === 'close') {
    clearInterval(timer);
    // One DEL per key: the keys are on different shards' slots.
    void Promise.all([...keys.map((key) => redis.del(key)), redis.srem(registryKey, processId)])
      .catch(() => undefined)
      .then(() => {
        redis.disconnect();
        post('closed');
      });
    return;
  }
  if ('dataPathFailing' in message) {
    withdraw(message.dataPathFailing);
    return;
  }
  if ('run' in message) {
    runForParent(message.run);
    return;
  }
  for (const [key, token] of message.locks) {
    if (token === null) locks.delete(key);
    else locks.set(key, token);
  }
});
