import { expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { isCluster } from '../../shared/redis/connect-redis.js';
import { shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { startWorker } from '../../worker/start-worker.js';
import { clusterTestConfig } from '../helpers/redis-cluster.js';
import { describeOnCluster } from '../helpers/describe-on-cluster.js';
import { runCli } from '../helpers/run-cli.js';
import { waitForRuns } from '../helpers/wait-for-runs.js';
import { eventually } from '../helpers/test-env.js';
import { Queue } from 'bullmq';
import { stepJobId } from '../../shared/contracts/job-schema.js';
import { ProviderRateLimiter } from '../../shared/operations/limits/provider-rate-limiter.js';
import { bullmqConnection } from '../../shared/bullmq/bullmq-connection.js';

describeOnCluster('runs on a real Redis Cluster (3 masters + 3 replicas): worker, client, shards', (cluster) => {
  for (const shards of [3, 6]) {
    it(`AGENTQ_SHARDS=${shards}: chain runs enqueued by the client complete, their shards spread evenly over the masters`, async () => {
      const config = clusterTestConfig(cluster, { AGENTQ_SHARDS: String(shards) });
      const worker = await startWorker({ config, logger: createLogger(config.logLevel), reconciler: false });
      const client = new AgentClient({ config });
      try {
        expect(isCluster(client.store.redis)).toBe(true);
        const runs = await Promise.all(
          Array.from({ length: 24 }, (_unused, index) =>
            client.enqueue({ graph: 'chain', input: { steps: 4 }, idempotencyKey: `chain-${index}` }),
          ),
        );
        const finished = await waitForRuns(
          client,
          runs.map((run) => run.id),
          { timeoutMs: 60_000 },
        );
        expect(finished.map((run) => run.status)).toEqual(runs.map(() => 'completed'));
        expect(new Set(finished.map((run) => run.stepCount))).toEqual(new Set([4]));
        // Every shard got runs, and the shards' slots are on more than one master.
        const used = new Set(runs.map((run) => client.store.keys.shardOf(run.id)));
        expect(used.size).toBe(shards);
        // The run-list repair scans every master (SCAN is per node) and finds every shard's runs.
        const index = client.store.keys.tenantRuns(config.tenant);
        await client.store.redis.del(index);
        expect(await client.reindex({ count: 100 })).toEqual({ runs: runs.length, added: runs.length });
        expect(await client.store.redis.zcard(index)).toBe(runs.length);
        const redis = client.store.redis;
        if (!isCluster(redis)) throw new Error('not a cluster connection');
        const masters = new Map<string, number>();
        for (let shard = 0; shard < shards; shard++) {
          const slot = (await redis.call(
            'CLUSTER',
            'KEYSLOT',
            `${stepQueuePrefix(config.queuePrefix, shard, config.shards)}:${STEP_QUEUE}:wait`,
          )) as number;
          const runSlot = (await redis.call(
            'CLUSTER',
            'KEYSLOT',
            `${client.store.keys.runKeyPrefix(shard)}x:meta`,
          )) as number;
          // A run's keys and its shard's step queue share one slot: the transition script is legal.
          expect(runSlot).toBe(slot);
          const master = redis.slots[slot]![0]!;
          masters.set(master, (masters.get(master) ?? 0) + 1);
        }
        // Balanced shard tags (shared/contracts/shards.ts): the same number of shards on each of the 3 masters.
        expect([...masters.values()]).toEqual([shards / 3, shards / 3, shards / 3]);
        // Cross-slot reads by design: the tenant's run list gathers runs of every shard.
        const listed = await client.list({ limit: 100 });
        expect(new Set(listed.runs.map((run) => run.id))).toEqual(new Set(runs.map((run) => run.id)));
        if (shards === 3) {
          // The CLI on the cluster: REDIS_CLUSTER_NODES and the hash-tagged prefix, nothing else.
          const env = {
            REDIS_CLUSTER_NODES: cluster.seeds,
            AGENTQ_KEY_PREFIX: config.keyPrefix,
            AGENTQ_QUEUE_PREFIX: config.queuePrefix,
            AGENTQ_SHARDS: '3',
            AGENTQ_LOG_LEVEL: 'silent',
          };
          const run = await runCli(['run', 'chain', '--input', '{"steps": 2}', '--wait', '--json'], env);
          expect(run.code).toBe(0);
          expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', stepCount: 2 });
          const listedByCli = await runCli(['runs', '--status', 'completed', '--json'], env);
          expect((JSON.parse(listedByCli.stdout) as { runs: unknown[] }).runs).toHaveLength(runs.length + 1);
        }
      } finally {
        await client.close();
        await worker.close();
      }
    });
  }

  it('the reconciler re-enqueues a run whose step job was lost, and the provider limiter counts, on the cluster', async () => {
    const config = clusterTestConfig(cluster, { AGENTQ_SHARDS: '3', AGENTQ_RECONCILE_AFTER_MS: '200' });
    let worker = await startWorker({ config, logger: createLogger(config.logLevel), reconciler: false });
    const client = new AgentClient({ config });
    const bullmq = bullmqConnection(config, 'worker');
    try {
      const queued = await client.enqueue({ graph: 'chain', input: { steps: 4, sleepMs: 300 } });
      await eventually(async () => ((await client.get(queued.id))?.stepCount ?? 0) >= 1);
      // Stop the worker (its active step finishes and hands on), then lose the next step job.
      await worker.close();
      const meta = await client.store.reads.get(queued.id);
      expect(meta?.status).toBe('running');
      const queue = new Queue(STEP_QUEUE, {
        connection: bullmq.connection,
        prefix: stepQueuePrefix(config.queuePrefix, shardOf(queued.id, 3), 3),
      });
      const pending = await queue.getJob(stepJobId(queued.id, meta!.superstep, 0));
      expect(await pending?.getState()).toBe('waiting');
      await pending!.remove();
      await queue.close();
      worker = await startWorker({ config, logger: createLogger(config.logLevel), reconciler: false });
      await new Promise((resolve) => setTimeout(resolve, 300)); // older than AGENTQ_RECONCILE_AFTER_MS
      expect((await worker.sweep()).requeued).toBe(1);
      expect((await client.wait(queued.id, { timeoutMs: 10_000 })).output).toEqual({ visited: [0, 1, 2, 3] });

      // The provider limiter's sliding window (one key, its own tag) on the Cluster connection.
      const limiter = new ProviderRateLimiter(client.store.redis, client.store.keys, 2000);
      const limits = { requestsPerMinute: 2, tokensPerMinute: 0 };
      const grants = [];
      for (let index = 0; index < 3; index++) grants.push((await limiter.acquire('openai', 'm1', limits, 10)).granted);
      expect(grants).toEqual([true, true, false]);
    } finally {
      await client.close();
      await worker.close();
      bullmq.close();
    }
  });
});
