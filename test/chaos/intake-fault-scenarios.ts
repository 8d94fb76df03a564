import { Queue, type Job } from 'bullmq';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { spawnWorker } from '../helpers/worker-processes.js';
import { allFinished, startFleet, until, type Figures } from './fault-scenarios.js';
import { MODEL_STEPS_GRAPH } from './workers-killed-graph.js';

/**
 * Fault scenarios of the intake (poison jobs, unserved graphs) and of shutdown, for `npm run bench -- --only faults`
 * (the chaos tests that assert them: poison-intake.test.ts, served-graphs.test.ts, stop-without-redis.test.ts).
 */

/**
 * `good` model-calling runs (3 steps each) on one worker, alone and then beside `poison` raw jobs of
 * 20 MB on the intake queue. Figures: the good runs' wall time both ways and its ratio (goal ≤ 1.5), and
 * how often each poison job was taken (goal 1).
 */
export async function poisonIntakeScenario({
  good = 30,
  poison = 3,
  log = () => undefined,
}: { good?: number; poison?: number; log?: (line: string) => void } = {}): Promise<Figures> {
  const fleet = await startFleet({ workers: 1, concurrency: 8, latencyMs: [100, 200] });
  const intake = new Queue(INTAKE_QUEUE, {
    connection: { url: fleet.config.redisUrl!, maxRetriesPerRequest: null },
    prefix: fleet.config.queuePrefix,
  });
  try {
    const goodRuns = async (tag: string) => {
      const ids = Array.from({ length: good }, (_, index) => `good-${tag}-${index}`);
      const started = Date.now();
      await intake.addBulk(
        ids.map((runId) => ({ name: 'raw', data: { v: 1, graph: MODEL_STEPS_GRAPH, input: { steps: 3 }, runId } })),
      );
      await allFinished(fleet, ids, 300_000);
      return Date.now() - started;
    };
    const aloneMs = await goodRuns('alone');
    const pad = 'x'.repeat(20 * 1024 * 1024);
    const poisoned: Job[] = [];
    for (let index = 0; index < poison; index += 1)
      poisoned.push(await intake.add('raw', { v: 1, graph: MODEL_STEPS_GRAPH, input: { steps: 1, pad } }));
    log(`poison intake: ${poison} raw jobs of 20 MB queued beside ${good} good runs`);
    const besideMs = await goodRuns('beside');
    await until(
      async () => (await Promise.all(poisoned.map((job) => intake.getJobState(job.id!)))).every((s) => s === 'failed'),
      60_000,
      'the poison jobs to fail',
    );
    const taken = await Promise.all(poisoned.map(async (job) => (await intake.getJob(job.id!))?.attemptsStarted ?? 0));
    return {
      poison_jobs: poison,
      poison_good_runs: good,
      poison_good_runs_alone_s: Math.round(aloneMs / 100) / 10,
      poison_good_runs_beside_s: Math.round(besideMs / 100) / 10,
      poison_good_runs_slowdown: Math.round((besideMs / aloneMs) * 100) / 100,
      poison_max_times_taken: Math.max(...taken),
    };
  } finally {
    await intake.close();
    await fleet.close();
  }
}

/** A raw job for `chain@9` (no worker serves it) with AGENTQ_UNSERVED_GRAPH_WAIT_MS = `waitMs`: seconds to its failure. */
export async function unservedVersionScenario({ waitMs = 3000 }: { waitMs?: number } = {}): Promise<Figures> {
  const fleet = await startFleet({
    workers: 1,
    concurrency: 2,
    latencyMs: [10, 20],
    env: { AGENTQ_UNSERVED_GRAPH_WAIT_MS: String(waitMs) },
  });
  const intake = new Queue(INTAKE_QUEUE, {
    connection: { url: fleet.config.redisUrl!, maxRetriesPerRequest: null },
    prefix: fleet.config.queuePrefix,
  });
  try {
    const started = Date.now();
    await intake.add('raw', { v: 1, graph: 'chain', graphVersion: '9', input: { steps: 1 }, runId: 'unserved-9' });
    const [record] = await allFinished(fleet, ['unserved-9'], 60_000).catch(async () => {
      await until(async () => (await fleet.client.get('unserved-9')) ?? undefined, 10_000, 'the run record');
      return allFinished(fleet, ['unserved-9'], 60_000);
    });
    return {
      unserved_wait_ms: waitMs,
      unserved_version_failed: record?.status === 'failed' && record.error?.code === 'UNKNOWN_GRAPH' ? 1 : 0,
      unserved_version_failed_after_s: Math.round((Date.now() - started) / 100) / 10,
    };
  } finally {
    await intake.close();
    await fleet.close();
  }
}

/** SIGTERM to a worker with steps in flight as its Redis is killed: seconds to its exit (grace 2 s + release 2 s). */
export async function stopWithoutRedisScenario(): Promise<Figures> {
  const fleet = await startFleet({ workers: 0, concurrency: 4, latencyMs: [2000, 3000] });
  try {
    const env = {
      REDIS_URL: fleet.config.redisUrl!,
      AGENTQ_KEY_PREFIX: fleet.config.keyPrefix,
      AGENTQ_QUEUE_PREFIX: fleet.config.queuePrefix,
      AGENTQ_SHUTDOWN_GRACE_MS: '2000',
      AGENTQ_SHUTDOWN_RELEASE_MS: '2000',
      AGENTQ_INGEST_CONCURRENCY: '0',
      AGENTQ_LOG_LEVEL: 'error',
      EMBED_PROVIDER: 'none',
    };
    const worker = await spawnWorker('test/chaos/chain-worker.ts', env);
    fleet.workers.push(worker);
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => fleet.client.enqueue({ graph: 'chain', input: { steps: 50, sleepMs: 300 } })),
    );
    await until(
      async () => (await Promise.all(runs.map((run) => fleet.client.get(run.id)))).every((run) => run!.stepCount > 0),
      30_000,
      'the runs to be in flight',
    );
    const exited = new Promise<number>((resolve) => worker.once('exit', () => resolve(Date.now())));
    const termAt = Date.now();
    await fleet.redis.kill();
    worker.kill('SIGTERM');
    const exitAt = await Promise.race([exited, new Promise<number>((resolve) => setTimeout(() => resolve(0), 60_000))]);
    return {
      stop_without_redis_grace_plus_release_s: 4,
      stop_without_redis_exit_s: exitAt === 0 ? -1 : Math.round((exitAt - termAt) / 100) / 10,
    };
  } finally {
    // Redis was killed: start it again so the fleet's own close finds it (and removes its directory).
    await fleet.redis.start().catch(() => undefined);
    await fleet.close();
  }
}
