import { Cluster, type ClusterOptions } from 'ioredis';
import { reconnectDelay, type RedisRole } from './create-redis.js';
import type { RedisClusterNode } from '../config/redis-cluster-nodes.js';

/**
 * The Cluster counterpart of createRedis: the same role options on every node connection, the same
 * reconnect curve, and a slots refresh on every reconnect so that a promoted replica is found quickly
 * after a failover (ioredis follows MOVED replies too, but only after a command hit the old master).
 */
export function createRedisCluster(nodes: RedisClusterNode[], role: RedisRole, commandTimeoutMs = 1000): Cluster {
  const redisOptions =
    role === 'producer'
      ? { enableOfflineQueue: false, commandTimeout: commandTimeoutMs, maxRetriesPerRequest: 1 }
      : role === 'step'
        ? { maxRetriesPerRequest: null, commandTimeout: commandTimeoutMs }
        : { maxRetriesPerRequest: null };
  const options: ClusterOptions = {
    redisOptions,
    enableOfflineQueue: role !== 'producer',
    // Live tokens use sharded pub/sub on a Cluster (SSUBSCRIBE on the channel's master; token-hub.ts).
    ...(role === 'subscriber' ? { shardedSubscribers: true } : {}),
    clusterRetryStrategy: reconnectDelay,
    slotsRefreshTimeout: 2000,
    // ioredis refreshes its slot map on MOVED only, and a master killed outright answers nothing
    // (redis/ioredis#559, #1863): a periodic refresh finds the promoted replica.
    slotsRefreshInterval: 1000,
    // Failover: the moved slots answer CLUSTERDOWN/TRYAGAIN for up to cluster-node-timeout; keep retrying.
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    retryDelayOnFailover: 200,
    // ioredis's 16 redirections at 200 ms give up after about 3 s, before a replica is promoted
    // (cluster-node-timeout plus an election): 100 of them wait out about 20 s.
    maxRedirections: 100,
  };
  const cluster = new Cluster(nodes, options);
  // As in createRedis: errors reach the commands; no "[ioredis] Unhandled error event" on stderr.
  cluster.on('error', () => undefined);
  return cluster;
}
