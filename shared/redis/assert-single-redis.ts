import type { Config } from '../config.js';
import { AgentqError } from '../errors.js';

/**
 * Redis Cluster mode is being built (issue 21): REDIS_CLUSTER_NODES is parsed and checked, but the
 * components do not connect to a Cluster yet. Rather than fall back to a single Redis the user did not
 * ask for, a component refuses to start, saying so.
 */
export function assertSingleRedis(config: Pick<Config, 'redisClusterNodes'>, component: string): void {
  if (config.redisClusterNodes) {
    throw new AgentqError(
      'INVALID_INPUT',
      `REDIS_CLUSTER_NODES is set, but the ${component} cannot run on Redis Cluster yet (cluster mode is in progress: see "Redis Cluster" in README.md); unset it and point REDIS_URL at one Redis`,
    );
  }
}
