import { AgentqError } from '../../shared/contracts/errors.js';
import { describeRedisTarget, type RedisTarget } from '../../shared/redis/redis-target.js';
import type { RedisConnection } from '../../shared/redis/redis-connection.js';
import { redisFaultOf } from '../../shared/redis/redis-fault.js';

/** What a producer says when Redis does not answer: the target, and how to point agentq at one that does. */
export function redisUnreachable(target: RedisTarget, cause?: unknown): AgentqError {
  return new AgentqError(
    'UNAVAILABLE',
    `${describeRedisTarget(target)} is not reachable: start redis-server or set REDIS_URL (REDIS_CLUSTER_NODES for a cluster)`,
    { retryable: true, ...(cause === undefined ? {} : { cause }) },
  );
}

/**
 * Resolves once the connection answers (producer connections are made at once but answer later and
 * have no offline queue), failing with `redisUnreachable` after `timeoutMs`.
 */
export function whenRedisReady(redis: RedisConnection, target: RedisTarget, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(redisUnreachable(target));
    }, timeoutMs);
    redis.once('ready', onReady);
  });
}

/** A read tried again through a Redis outage (`RunReader.throughOutage`). */
export interface OutageRide {
  redis: RedisConnection;
  target: RedisTarget;
  /** How long Redis may stay away, from the first failure, before the read gives up. */
  outageMs: number;
}

/**
 * `read`'s answer, riding out a Redis restart as `wait` and `events` do with their blocking readers (whose
 * reads queue until Redis is back): a read that fails while Redis is away (a connection fault, or the
 * connection not ready) waits for the connection to be ready again and is tried again, for up to
 * `outageMs` from the first failure. Past that it fails with UNAVAILABLE, naming the target and how long
 * it waited, the last fault as its cause.
 */
export async function throughOutage<T>(read: () => Promise<T>, { redis, target, outageMs }: OutageRide): Promise<T> {
  let since: number | undefined;
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (redisFaultOf(error) !== 'unavailable' && redis.status === 'ready') throw error;
      since ??= Date.now();
      const left = since + outageMs - Date.now();
      if (left <= 0) throw outlasted(target, outageMs, error);
      // A connection still marked ready (a command timed out on a stopped Redis) answers at once: pause
      // between tries rather than spin.
      const wasReady = redis.status === 'ready';
      await whenRedisReady(redis, target, left).catch(() => {
        throw outlasted(target, outageMs, error);
      });
      if (wasReady) await new Promise((resolve) => setTimeout(resolve, Math.min(left, 250)));
    }
  }
}

function outlasted(target: RedisTarget, outageMs: number, cause: unknown): AgentqError {
  return new AgentqError('UNAVAILABLE', `${describeRedisTarget(target)} did not answer for ${outageMs} ms`, {
    retryable: true,
    cause,
  });
}
