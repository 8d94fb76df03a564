import { createRedisCluster } from './create-redis-cluster.js';
import { createRedis, type RedisRole } from './create-redis.js';
import type { RedisConnection } from './redis-connection.js';
import type { RedisTarget } from './redis-target.js';

// Kept apart (no ioredis there) for the CLI's record reader; re-exported for everyone else.
export { describeRedisTarget, type RedisTarget } from './redis-target.js';
export { isCluster, redisNodes, type RedisConnection } from './redis-connection.js';

/**
 * The one factory every component connects through: a Cluster when REDIS_CLUSTER_NODES is set, else
 * one Redis at REDIS_URL (or the default). Role options are the same either way (createRedis).
 */
export function connectRedis(target: RedisTarget, role: RedisRole, commandTimeoutMs = 1000): RedisConnection {
  return target.redisClusterNodes
    ? createRedisCluster(target.redisClusterNodes, role, commandTimeoutMs)
    : createRedis(target.redisUrl, role, commandTimeoutMs);
}
