import type { Cluster, Redis } from 'ioredis';

/** A connection to agentq's Redis: one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisConnection = Redis | Cluster;

/** True for a Cluster connection (ioredis marks it `isCluster`). */
export function isCluster(redis: RedisConnection): redis is Cluster {
  return (redis as Cluster).isCluster === true;
}

/**
 * The node connections of `redis`: a Cluster's nodes (`master`, or `all` with the replicas) once it has
 * its slot map, or the one Redis. For what is per node: INFO, CONFIG, SCAN, SCRIPT LOAD.
 */
export async function redisNodes(
  redis: RedisConnection,
  role: 'master' | 'all' = 'master',
  timeoutMs = 10_000,
): Promise<Redis[]> {
  if (!isCluster(redis)) return [redis];
  if (redis.status !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`the Redis Cluster connection was not ready within ${timeoutMs} ms (status ${redis.status})`),
          ),
        timeoutMs,
      );
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return redis.nodes(role);
}
