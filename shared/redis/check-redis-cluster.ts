import { Redis } from 'ioredis';
import { AgentqError } from '../contracts/errors.js';
import type { RedisClusterNode } from '../config/redis-cluster-nodes.js';

const ALL_SLOTS = 16384;

/**
 * Start-time check of REDIS_CLUSTER_NODES, before any component connects: every seed answers, runs in
 * cluster mode, belongs to the same cluster as the first, and the cluster serves all 16384 slots. Each
 * failure names the problem and the `redis-cli` command that fixes it; without the check, a half-made
 * cluster shows up later as CLUSTERDOWN on whatever command first touches an uncovered slot.
 */
export async function checkRedisCluster(nodes: RedisClusterNode[], timeoutMs = 2000): Promise<void> {
  let firstIds: Set<string> | undefined;
  let first = '';
  for (const node of nodes) {
    const name = `${node.host}:${node.port}`;
    const redis = new Redis({
      host: node.host,
      port: node.port,
      lazyConnect: true,
      enableOfflineQueue: false,
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    try {
      try {
        await redis.connect();
      } catch (error) {
        throw new AgentqError(
          'UNAVAILABLE',
          `REDIS_CLUSTER_NODES seed ${name} does not answer (${(error as Error).message}): start it or correct the address`,
        );
      }
      let info: string;
      try {
        info = (await redis.call('CLUSTER', 'INFO')) as string;
      } catch (error) {
        const message = (error as Error).message;
        if (/cluster support disabled/i.test(message)) {
          throw new AgentqError(
            'INVALID_INPUT',
            `REDIS_CLUSTER_NODES seed ${name} is a single Redis, not a cluster node: use REDIS_URL=redis://${name} for one Redis, or start the nodes with --cluster-enabled yes and join them with redis-cli --cluster create`,
          );
        }
        throw error;
      }
      const field = (key: string) => new RegExp(`^${key}:(\\S+)`, 'm').exec(info)?.[1];
      const assigned = Number(field('cluster_slots_assigned') ?? 0);
      if (assigned < ALL_SLOTS || field('cluster_state') !== 'ok') {
        throw new AgentqError(
          'UNAVAILABLE',
          `the cluster of seed ${name} serves ${assigned} of ${ALL_SLOTS} slots (cluster_state ${field('cluster_state') ?? '?'}): ` +
            `create it with redis-cli --cluster create <nodes> --cluster-replicas 1, or cover the missing slots with redis-cli --cluster fix ${name}`,
        );
      }
      const myId = (await redis.call('CLUSTER', 'MYID')) as string;
      if (!firstIds) {
        const lines = ((await redis.call('CLUSTER', 'NODES')) as string).split('\n').filter((line) => line !== '');
        firstIds = new Set(lines.map((line) => line.split(' ')[0]!));
        first = name;
      } else if (!firstIds.has(myId)) {
        throw new AgentqError(
          'INVALID_INPUT',
          `REDIS_CLUSTER_NODES seeds ${first} and ${name} belong to different clusters: list nodes of one cluster only`,
        );
      }
    } finally {
      redis.disconnect();
    }
  }
}
