import type { Cluster, Redis } from 'ioredis';
import { hostname } from 'node:os';

/** A queue's active list and job key prefix (queueLockScope), and its stalled check where it has one. */
export interface QueueScope {
  activeKey: string;
  jobKeyPrefix: string;
  /** BullMQ's stalled check of the queue, which a reap runs (queueReapScope). */
  stalledCheck?: { keys: string[]; maxStalledCount: number; intervalMs: number };
}

/** What a reap needs of the process's liveness (LivenessThreadData holds it all). */
export interface ReapScope {
  processId: string;
  /** This process's liveness keys, one per shard: a peer's are the same prefixes with its process id. */
  keys: string[];
  /** This machine's boot and pid namespace (machineIdentity), '' where unknown. */
  machine: string;
  registryKey: string;
  registryAlivePrefix: string;
  reapQueues: QueueScope[];
  locksOfLua: string;
  reapLua: string;
}

type Connection = Redis | Cluster;
const host = hostname();

/**
 * Whether `member` (`<host>:<pid>:<random>`), whose liveness key holds `value`, is a process of this
 * machine and pid namespace that has exited: the kernel has no such pid. A pid reused since looks
 * alive, and then only the key's lapse tells (as for a process of another machine).
 */
function exitedHere(scope: ReapScope, member: string, value: unknown): boolean {
  if (scope.machine === '' || value !== scope.machine) return false;
  const parts = member.split(':');
  const pid = Number(parts[parts.length - 2]);
  if (parts.slice(0, -2).join(':') !== host || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the pid runs, as another user's process.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The locks of `queue`'s active jobs whose tokens start with `tokenPrefix`: [job id, token, …]; 'del' deletes them too. */
export async function locksOf(
  redis: Connection,
  scope: Pick<ReapScope, 'locksOfLua'>,
  queue: QueueScope,
  tokenPrefix: string,
  mode: 'del' | 'keep',
): Promise<string[]> {
  return (await redis.eval(scope.locksOfLua, 1, queue.activeKey, queue.jobKeyPrefix, tokenPrefix, mode)) as string[];
}

/**
 * Registers this process (again, should a peer have taken it for dead), and releases the locks of
 * registered processes whose liveness key has lapsed, or that exited on this machine (their keys are
 * deleted first, one DEL per shard's slot, so that their claims on paid work are taken over at once too),
 * then forgets them. The liveness thread runs it every beat; the main thread at its own first beats
 * (liveness-thread.ts), so a worker started after a crash gets the dead one's steps back before its thread
 * is up. Two reaps of one process at once release nothing twice: each release is one script.
 */
export async function reapDead(
  redis: Connection,
  scope: ReapScope,
  onReaped: (member: string, released: number) => void,
): Promise<void> {
  const { processId, registryKey, registryAlivePrefix } = scope;
  const replies = (await redis.pipeline().sadd(registryKey, processId).smembers(registryKey).exec()) ?? [];
  const members = (replies[1]?.[1] ?? []) as string[];
  const others = members.filter((member) => member !== processId);
  if (others.length === 0) return;
  const alive = (await redis.pipeline(others.map((member) => ['get', registryAlivePrefix + member])).exec()) ?? [];
  const lapsed = others.filter((_member, index) => alive[index]?.[0] === null && alive[index]?.[1] === null);
  const exited = others.filter(
    (member, index) => alive[index]?.[0] === null && exitedHere(scope, member, alive[index]?.[1]),
  );
  // What each shard's liveness key of a process starts with (this process's end with its process id).
  const alivePrefixes = scope.keys.map((key) => key.slice(0, key.length - processId.length));
  // Only an exited process's keys: a lapsed one's may be written again meanwhile by a process that was
  // paused, whose claims must then hold.
  for (const member of exited) await Promise.all(alivePrefixes.map((prefix) => redis.del(prefix + member)));
  for (const member of [...lapsed, ...exited]) {
    // The queues at once (each release is one script of its own queue): a worker started after a crash
    // waits for this reap before it takes jobs, one round trip instead of one per queue.
    const replies = await Promise.all(scope.reapQueues.map((queue) => reapJobs(redis, scope, queue, member + '/')));
    const released = replies.reduce((sum, reply) => sum + reply.length / 2, 0);
    await redis.srem(registryKey, member);
    onReaped(member, released);
  }
}

/**
 * Releases the locks of `queue`'s active jobs whose tokens start with `tokenPrefix` (a dead process's):
 * [job id, token, …]. Where the queue has a stalled check, the jobs go back to wait in the same script,
 * rather than at its workers' next check, up to AGENTQ_STALLED_INTERVAL_MS later (twice that for a job
 * taken since the last check).
 */
async function reapJobs(
  redis: Connection,
  scope: ReapScope,
  queue: QueueScope,
  tokenPrefix: string,
): Promise<string[]> {
  if (!queue.stalledCheck) return locksOf(redis, scope, queue, tokenPrefix, 'del');
  const { keys: checkKeys, maxStalledCount, intervalMs: checkMs } = queue.stalledCheck;
  const args = [maxStalledCount, queue.jobKeyPrefix, Date.now(), checkMs, tokenPrefix];
  return (await redis.eval(scope.reapLua, checkKeys.length, ...checkKeys, ...args)) as string[];
}
