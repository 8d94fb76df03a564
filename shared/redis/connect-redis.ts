import type { Cluster, Redis } from 'ioredis';
import { createRedisCluster } from './create-redis-cluster.js';
import { createRedis, type RedisRole } from './create-redis.js';
import type { RedisTarget } from './redis-target.js';

// Kept apart (no ioredis there) for the CLI's record reader; re-exported for everyone else.
export { describeRedisTarget, type RedisTarget } from './redis-target.js';

/** A connection to agentq's Redis: one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisConnection = Redis | Cluster;

/**
 * The one factory every component connects through: a Cluster when REDIS_CLUSTER_NODES is set, else
 * one Redis at REDIS_URL (or the default). Role options are the same either way (createRedis).
 */
export function connectRedis(target: RedisTarget, role: RedisRole, commandTimeoutMs = 1000): RedisConnection {
  return target.redisClusterNodes ? createRedisCluster(target.redisClusterNodes, role, commandTimeoutMs) : createRedis(target.redisUrl, role, commandTimeoutMs);
}

/** True for a Cluster connection (ioredis marks it `isCluster`). */
export function isCluster(redis: RedisConnection): redis is Cluster {
  return (redis as Cluster).isCluster === true;
}

/**
 * The node connections of `redis`: a Cluster's nodes (`master`, or `all` with the replicas) once it has
 * its slot map, or the one Redis. For what is per node: INFO, CONFIG, SCAN, SCRIPT LOAD.
 */
export async function redisNodes(redis: RedisConnection, role: 'master' | 'all' = 'master', timeoutMs = 10_000): Promise<Redis[]> {
  if (!isCluster(redis)) return [redis];
  if (redis.status !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the Redis Cluster connection was not ready within ${timeoutMs} ms (status ${redis.status})`)), timeoutMs);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return redis.nodes(role);
}
