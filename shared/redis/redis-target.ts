import { DEFAULT_REDIS_URL } from '../config/redis-config.js';
import { redactCredentials } from '../contracts/redact-credentials.js';
import type { RedisClusterNode } from '../config/redis-cluster-nodes.js';

/** Where agentq's Redis is: the two settings of shared/config/config (at most one of them is set). */
export interface RedisTarget {
  redisUrl: string | undefined;
  redisClusterNodes?: RedisClusterNode[] | undefined;
}

/** How errors name the target: `Redis at redis://…` (credentials as `***`) or `Redis Cluster (seeds host:port,…)`. */
export function describeRedisTarget(target: RedisTarget): string {
  return target.redisClusterNodes
    ? `Redis Cluster (seeds ${target.redisClusterNodes.map((node) => `${node.host}:${node.port}`).join(',')})`
    : `Redis at ${redactCredentials(target.redisUrl ?? DEFAULT_REDIS_URL)}`;
}
