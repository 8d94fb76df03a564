import { Queue, Worker } from 'bullmq';
import { expect, it } from 'vitest';
import { createApi } from '../../producer/api/create-api.js';
import { loadConfig } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { checkRedisCluster } from '../../shared/redis/check-redis-cluster.js';
import { createRedisCluster } from '../../shared/redis/create-redis-cluster.js';
import { startPrivateRedis } from '../../shared/redis/private-redis-server.js';
import { parseClusterNodes } from '../../shared/config/redis-cluster-nodes.js';
import { stepQueuePrefix } from '../../shared/contracts/shards.js';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import { describeOnCluster } from '../helpers/describe-on-cluster.js';

async function refusal(promise: Promise<unknown>): Promise<AgentqError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AgentqError);
  return error as AgentqError;
}

describeOnCluster(
  'Redis Cluster: start-time check and queues on a real cluster (3 masters + 3 replicas)',
  (cluster) => {
    it('accepts the seeds of a cluster that serves every slot', async () => {
      await expect(checkRedisCluster(parseClusterNodes(cluster.seeds))).resolves.toBeUndefined();
    });

    it('refuses a single Redis given as a seed, naming REDIS_URL as the fix', async () => {
      const single = await startPrivateRedis();
      try {
        const error = await refusal(checkRedisCluster(parseClusterNodes(`127.0.0.1:${single.port}`)));
        expect(error.message).toContain('is a single Redis, not a cluster node');
        expect(error.message).toContain(`REDIS_URL=redis://127.0.0.1:${single.port}`);
      } finally {
        await single.stop();
      }
    });

    it('refuses cluster nodes that were never joined (slots uncovered)', async () => {
      const loose = await startRedisCluster({ count: 3, create: false });
      try {
        const error = await refusal(checkRedisCluster(parseClusterNodes(loose.seeds)));
        expect(error.message).toContain('serves 0 of 16384 slots');
        expect(error.message).toContain('redis-cli --cluster fix');
      } finally {
        await loose.stop();
      }
    });

    it('the worker and the API refuse to start on nodes never joined into a cluster, naming the fix', async () => {
      const loose = await startRedisCluster({ count: 3, create: false });
      try {
        const config = loadConfig({
          REDIS_CLUSTER_NODES: loose.seeds,
          AGENTQ_QUEUE_PREFIX: '{agentq}',
          AGENTQ_LOG_LEVEL: 'silent',
        });
        await expect(startWorker({ config, logger: createLogger('silent') })).rejects.toThrow(
          /serves 0 of 16384 slots.*redis-cli --cluster create/,
        );
        await expect(createApi({ config, logger: createLogger('silent') })).rejects.toThrow(
          /serves 0 of 16384 slots.*redis-cli --cluster create/,
        );
      } finally {
        await loose.stop();
      }
    });

    it('refuses seeds of two different clusters', async () => {
      const other = await startRedisCluster({ count: 3, replicas: 0 });
      try {
        const seeds = `${cluster.nodes[0]!.host}:${cluster.nodes[0]!.port},${other.nodes[0]!.host}:${other.nodes[0]!.port}`;
        const error = await refusal(checkRedisCluster(parseClusterNodes(seeds)));
        expect(error.message).toContain('belong to different clusters');
      } finally {
        await other.stop();
      }
    });

    it('refuses a seed that does not answer', async () => {
      const error = await refusal(checkRedisCluster([{ host: '127.0.0.1', port: 1 }], 500));
      expect(error.code).toBe('UNAVAILABLE');
      expect(error.message).toContain('127.0.0.1:1 does not answer');
    });

    it('runs BullMQ jobs on the sharded step-queue prefixes, and the shards land on different masters', async () => {
      const connection = createRedisCluster(parseClusterNodes(cluster.seeds), 'worker');
      const queues: Queue[] = [];
      const workers: Worker[] = [];
      try {
        const shards = 6;
        const seen = new Set<number>();
        const masters = new Set<string>();
        for (let shard = 0; shard < shards; shard++) {
          const prefix = stepQueuePrefix('{agentq}', shard, shards);
          const queue = new Queue('agentq-steps', { connection, prefix });
          queues.push(queue);
          await queue.add('step', { shard });
          // The master that owns this shard's slot: where its keys live.
          const slot = (await connection.call('CLUSTER', 'KEYSLOT', `${prefix}:agentq-steps:wait`)) as number;
          const owner = connection.slots[slot]?.[0];
          if (owner) masters.add(owner);
        }
        await new Promise<void>((resolve) => {
          for (let shard = 0; shard < shards; shard++) {
            workers.push(
              new Worker(
                'agentq-steps',
                async (job) => {
                  seen.add((job.data as { shard: number }).shard);
                  if (seen.size === shards) resolve();
                },
                { connection, prefix: stepQueuePrefix('{agentq}', shard, shards) },
              ),
            );
          }
        });
        expect([...seen].sort()).toEqual([0, 1, 2, 3, 4, 5]);
        // The six shard tags hash into six equal slices of the slots: two shards on each of the 3 masters.
        expect(masters.size).toBe(3);
      } finally {
        await Promise.all(workers.map((worker) => worker.close()));
        await Promise.all(queues.map((queue) => queue.close()));
        connection.disconnect();
      }
    });

    it('shows why the prefix needs a tag: an untagged BullMQ prefix fails with CROSSSLOT', async () => {
      const connection = createRedisCluster(parseClusterNodes(cluster.seeds), 'worker');
      const queue = new Queue('agentq-runs', { connection, prefix: 'agentq' });
      try {
        await expect(queue.add('run', {})).rejects.toThrow(/CROSSSLOT/);
      } finally {
        await queue.close();
        connection.disconnect();
      }
    });
  },
);
