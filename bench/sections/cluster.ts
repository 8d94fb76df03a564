/**
 * The `cluster` section: what sharding buys on Redis Cluster. The `chain` graph
 * (10 steps, sleepMs 0) on one worker process, 100 runs in flight, with AGENTQ_SHARDS 1, 3 and 6 on a
 * loopback cluster of 3 masters + 3 replicas, and the same on one Redis. Per configuration: steps/s and
 * each master's Redis CPU per step (INFO cpu before and after), plus the replicas' CPU per step in all.
 * On a 2-core machine the worker process, not Redis, is the bottleneck: the figure that shows sharding
 * is how the Redis CPU per step spreads over the masters, not steps/s.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { clusterUnavailableReason, startRedisCluster } from '../../test/helpers/redis-cluster.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { engineLoop } from '../lib/engine-loop.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { forkWorker } from '../lib/forked-worker.js';
import { redisCpuUs } from '../lib/process-meter.js';

const STEPS = 10;
const IN_FLIGHT = 100;
const SHARD_COUNTS = [1, 3, 6];

interface Target {
  /** Figure name part: `cluster` or `single`. */
  name: string;
  env: Record<string, string>;
  /** The nodes whose CPU is read: the masters (replicas apart), or the one Redis. */
  masters: { address: string; redis: Redis }[];
  replicas: Redis[];
}

async function measure(
  target: Target,
  shards: number,
  context: BenchContext,
  record: (name: string, value: number) => void,
): Promise<void> {
  const id = randomBytes(3).toString('hex');
  const env = {
    ...target.env,
    AGENTQ_KEY_PREFIX: `bench${id}`,
    AGENTQ_QUEUE_PREFIX: `{benchq${id}}`,
    AGENTQ_SHARDS: String(shards),
    AGENTQ_WORKER_CONCURRENCY: String(IN_FLIGHT),
    AGENTQ_LOG_LEVEL: 'error',
    AGENTQ_RETENTION_SECONDS: '600',
    OTEL_TRACES_EXPORTER: 'none',
  };
  const total = context.quick ? 100 : 600;
  const client = new AgentClient({ config: loadConfig(env) });
  const worker = await forkWorker('bench/workers/engine-worker.ts', env);
  try {
    await engineLoop(worker, client, {
      graph: 'chain',
      input: { steps: STEPS },
      inFlight: IN_FLIGHT,
      total: context.quick ? 20 : 100,
    });
    const cpu = async (nodes: Redis[]) => Promise.all(nodes.map((node) => redisCpuUs(node)));
    const [mastersBefore, replicasBefore] = [
      await cpu(target.masters.map((master) => master.redis)),
      await cpu(target.replicas),
    ];
    const { elapsedMs } = await engineLoop(worker, client, {
      graph: 'chain',
      input: { steps: STEPS },
      inFlight: IN_FLIGHT,
      total,
    });
    const [mastersAfter, replicasAfter] = [
      await cpu(target.masters.map((master) => master.redis)),
      await cpu(target.replicas),
    ];
    const steps = total * STEPS;
    const prefix = `${target.name}_s${shards}`;
    record(`${prefix}_steps_per_s`, steps / (elapsedMs / 1000));
    const perMaster = mastersAfter.map((after, index) => (after - mastersBefore[index]!) / steps);
    perMaster.forEach((value, index) => record(`${prefix}_redis_cpu_us_per_step_m${index}`, value));
    record(
      `${prefix}_redis_cpu_us_per_step_masters`,
      perMaster.reduce((sum, value) => sum + value, 0),
    );
    if (target.replicas.length > 0)
      record(
        `${prefix}_redis_cpu_us_per_step_replicas`,
        replicasAfter.reduce((sum, after, index) => sum + after - replicasBefore[index]!, 0) / steps,
      );
    context.log(`${prefix}: masters ${target.masters.map((master) => master.address).join(', ')}`);
  } finally {
    await worker.stop();
    await client.close();
  }
}

async function runCluster(context: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(context.log);
  const unavailable = clusterUnavailableReason();
  if (unavailable) throw new Error(`BENCH_CLUSTER_UNAVAILABLE: ${unavailable}`);
  const cluster = await startRedisCluster();
  const nodes = cluster.nodes.map((node) => ({
    address: `${node.host}:${node.port}`,
    redis: new Redis({ host: node.host, port: node.port }),
  }));
  const single = new Redis(context.redisUrl);
  try {
    const roles = await Promise.all(
      nodes.map(async (node) => /role:master/.test(await node.redis.info('replication'))),
    );
    const clusterTarget: Target = {
      name: 'cluster',
      env: { REDIS_CLUSTER_NODES: cluster.seeds, REDIS_URL: '' },
      masters: nodes.filter((_node, index) => roles[index]),
      replicas: nodes.filter((_node, index) => !roles[index]).map((node) => node.redis),
    };
    const singleTarget: Target = {
      name: 'single',
      env: { REDIS_URL: context.redisUrl },
      masters: [{ address: context.redisUrl, redis: single }],
      replicas: [],
    };
    for (const shards of SHARD_COUNTS) {
      context.log(
        `chain ${STEPS} steps, ${IN_FLIGHT} in flight, AGENTQ_SHARDS=${shards}: Redis Cluster (3 masters + 3 replicas), then one Redis`,
      );
      await measure(clusterTarget, shards, context, record);
      await measure(singleTarget, shards, context, record);
    }
  } finally {
    for (const node of nodes) node.redis.disconnect();
    single.disconnect();
    await cluster.stop();
  }
  return figures;
}

export const clusterSection: BenchSection = { name: 'cluster', run: runCluster };
