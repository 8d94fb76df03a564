import type { ConnectionOptions } from 'bullmq';
import { DEFAULT_REDIS_URL } from '../config/redis-config.js';
import { connectRedis, type RedisTarget } from '../redis/connect-redis.js';
import { reconnectDelay } from '../redis/create-redis.js';

export interface BullmqConnection {
  /** What BullMQ's Queue and Worker take as `connection`. */
  connection: ConnectionOptions;
  /** Disconnects what this made for BullMQ; call after the queues and workers using it are closed. */
  close(): void;
}

/**
 * The `connection` for BullMQ queues and workers. For one Redis, options: BullMQ opens (and closes) its
 * own connections, a worker's blocking one included. BullMQ cannot make a Cluster from options, so for a
 * Cluster it is a Cluster of ours (connectRedis), shared by the queues given it (a worker duplicates it
 * for its blocking reads), which `close` disconnects. Role options as connectRedis's.
 */
export function bullmqConnection(
  target: RedisTarget,
  role: 'worker' | 'producer',
  commandTimeoutMs = 1000,
): BullmqConnection {
  if (target.redisClusterNodes) {
    const cluster = connectRedis(target, role, commandTimeoutMs);
    return { connection: cluster, close: () => cluster.disconnect() };
  }
  const url = target.redisUrl ?? DEFAULT_REDIS_URL;
  const options =
    role === 'worker'
      ? { url, maxRetriesPerRequest: null, retryStrategy: reconnectDelay }
      : {
          url,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: commandTimeoutMs,
          retryStrategy: reconnectDelay,
        };
  return { connection: options, close: () => undefined };
}
