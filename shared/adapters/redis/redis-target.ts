import { DEFAULT_REDIS_URL } from '../../config/redis-config.js';
import type { RedisClusterNode } from './redis-cluster-nodes.js';

/** Where agentq's Redis is: the two settings of shared/config/config (at most one of them is set). */
export interface RedisTarget {
  redisUrl: string | undefined;
  redisClusterNodes?: RedisClusterNode[] | undefined;
}

/** How errors name the target: `Redis at redis://…` or `Redis Cluster (seeds host:port,…)`. */
export function describeRedisTarget(target: RedisTarget): string {
  return target.redisClusterNodes
    ? `Redis Cluster (seeds ${target.redisClusterNodes.map((node) => `${node.host}:${node.port}`).join(',')})`
    : `Redis at ${target.redisUrl ?? DEFAULT_REDIS_URL}`;
}
