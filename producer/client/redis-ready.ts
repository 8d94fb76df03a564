import { AgentqError } from '../../shared/contracts/errors.js';
import { describeRedisTarget, type RedisTarget } from '../../shared/redis/redis-target.js';
import type { RedisConnection } from '../../shared/redis/redis-connection.js';

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
