import type { ChildProcess } from 'node:child_process';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { stepJobId } from '../../shared/contracts/job-schema.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { stepQueuePrefix } from '../../shared/contracts/shards.js';
import { auditRun } from '../helpers/run-audit.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { suiteSeed } from '../helpers/suite-scale.js';
import { loadScaledMs } from '../helpers/load-scale.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { MODEL_STEPS_GRAPH } from './workers-killed-graph.js';
import { startModelStepsServer } from './workers-killed-model-server.js';
import { MODEL_STEPS_WORKER, modelStepsWorkerEnv } from './workers-killed-worker-env.js';

const SCENARIO = 'lost writes';
const STEPS = 3;

/**
 * Fault scenario 5: a run's only live step job is lost, two ways — its waiting job deleted from Redis,
 * and its job failed by BullMQ's stalled limit — and nothing but the reconciler (on, in every worker
 * process, sweeping every 500 ms for runs untouched for 1 s) can bring the run back. Both runs must
 * complete, each step committed once. A short lock and maxStalledCount 1 make the stall limit
 * reachable with two kills. Its waits stretch with the machine's load (load-scale.ts): a busy machine
 * starts and runs the workers slower, without changing what must happen.
 */
describe('chaos: lost step jobs are brought back by the reconciler', () => {
  const seed = suiteSeed();
  const config = testConfig({
    AGENTQ_WORKER_CONCURRENCY: '2',
    AGENTQ_LOCK_DURATION_MS: '2000',
    AGENTQ_STALLED_INTERVAL_MS: '1000',
    AGENTQ_MAX_STALLED_COUNT: '1',
    AGENTQ_RECONCILE_INTERVAL_MS: '500',
    AGENTQ_RECONCILE_AFTER_MS: '1000',
  });
  const client = new AgentClient({ config });
  /** Runs whose first model call never answers: the step stays active until its worker is killed. */
  const held = new Set<string>();
  const starting = startModelStepsServer({
    seed,
    latencyMs: [500, 1000],
    hold: (caller) => held.has(caller.runId) && caller.step === 0,
  });
  const connection = { url: config.redisUrl!, maxRetriesPerRequest: null };
  const stepQueue = new Queue(STEP_QUEUE, {
    connection,
    prefix: stepQueuePrefix(config.queuePrefix, 0, config.shards),
  });
  const queueEvents = new QueueEvents(STEP_QUEUE, {
    connection,
    prefix: stepQueuePrefix(config.queuePrefix, 0, config.shards),
  });
  const workers: ChildProcess[] = [];
  const spawn = async () => {
    const worker = await spawnWorker(MODEL_STEPS_WORKER, modelStepsWorkerEnv(config, (await starting).server.url));
    workers.push(worker);
    return worker;
  };
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await Promise.all([queueEvents.close(), stepQueue.close(), client.close()]);
    await (await starting).close();
  });

  it(
    'a waiting step job deleted from Redis (list entry and hash): the reconciler re-enqueues it and the run completes',
    async () => {
      console.log(`lost-writes seed=${seed} (AGENTQ_SEED=${seed} replays the model latencies)`);
      const model = await starting;
      const first = await spawn();
      const run = await client.enqueue({
        graph: MODEL_STEPS_GRAPH,
        input: { steps: STEPS },
        runId: `lost-job-${seed}`,
      });
      // Stop the only worker while step 0 is mid-call: it commits step 0, adds step 1's job, and exits.
      await eventually(
        async () => model.callsOf(run.id, 0).some((call) => call.outcome === 'pending'),
        loadScaledMs(30_000),
        'step 0 asking the model',
      );
      first.kill('SIGTERM');
      await new Promise((resolve) => first.once('exit', resolve));

      const meta = await client.store.reads.get(run.id);
      expect(meta).toMatchObject({ status: 'running', superstep: 1 });
      const jobId = stepJobId(run.id, 1, 0);
      expect(await (await stepQueue.getJob(jobId))?.getState()).toBe('waiting');
      // Lose it the way a failed write or an evicted key would: gone from the wait list, hash deleted.
      const redis = client.store.redis;
      expect(await redis.lrem(stepQueue.toKey('wait'), 0, jobId)).toBe(1);
      expect(await redis.del(stepQueue.toKey(jobId))).toBe(1);
      expect(await stepQueue.getJob(jobId)).toBeUndefined();

      await spawn();
      const done = await client.wait(run.id, { timeoutMs: loadScaledMs(60_000) });
      const audit = await auditRun(client, run.id, { supersteps: STEPS });
      recordFigure({ scenario: SCENARIO, name: 'deleted_waiting_job_run', value: done.status, goal: 'completed' });
      expect(done).toMatchObject({ status: 'completed', output: { visited: [0, 1, 2] } });
      expect(audit.problems).toEqual([]);
      // The deleted job never ran: each step asked the model once.
      expect([0, 1, 2].map((step) => model.callsOf(run.id, step).length)).toEqual([1, 1, 1]);
    },
    loadScaledMs(120_000),
  );

  it(
    'a step job failed by the stalled limit (its workers SIGKILLed twice): the reconciler re-enqueues it and the run completes',
    async () => {
      const model = await starting;
      // Only the workers started below may take the run's step: stop the ones of the test before.
      await Promise.all(workers.map((worker) => killHard(worker)));
      const failed: { jobId: string; failedReason: string }[] = [];
      queueEvents.on('failed', ({ jobId, failedReason }) => failed.push({ jobId, failedReason }));
      await queueEvents.waitUntilReady();

      const run = await client.enqueue({ graph: MODEL_STEPS_GRAPH, input: { steps: STEPS }, runId: `stalled-${seed}` });
      held.add(run.id);
      const killed: number[] = [];
      // Two workers in turn take step 0 and die holding it: the second stall is one more than maxStalledCount.
      for (let kill = 1; kill <= 2; kill += 1) {
        const worker = await spawn();
        await eventually(
          async () => model.callsOf(run.id, 0).some((call) => call.pid === worker.pid && call.outcome === 'pending'),
          loadScaledMs(30_000),
          `worker ${kill} mid-call on step 0`,
        );
        killed.push(worker.pid!);
        await killHard(worker);
      }
      held.delete(run.id);
      await spawn();

      const jobId = stepJobId(run.id, 0, 0);
      const stalledOut = await eventually(
        async () => failed.find((event) => event.jobId === jobId),
        loadScaledMs(30_000),
        `${jobId} failed by the stalled limit`,
      );
      const done = await client.wait(run.id, { timeoutMs: loadScaledMs(60_000) });
      const audit = await auditRun(client, run.id, { supersteps: STEPS });
      recordFigure({ scenario: SCENARIO, name: 'stalled_limit_job_run', value: done.status, goal: 'completed' });
      expect(stalledOut.failedReason).toMatch(/stalled more than allowable limit/);
      expect(done).toMatchObject({ status: 'completed', output: { visited: [0, 1, 2] } });
      expect(audit.problems).toEqual([]);
      // Step 0 asked again only because the processes that asked before were killed mid-call, before
      // its answer was saved (a saved answer is never paid for again).
      expect(model.callsOf(run.id, 0).map((call) => [killed.includes(call.pid), call.outcome])).toEqual([
        [true, 'aborted'],
        [true, 'aborted'],
        [false, 'answered'],
      ]);
      // The job the reconciler put back in place of the failed one ran to completion.
      expect(await (await stepQueue.getJob(jobId))?.getState()).toBe('completed');
    },
    loadScaledMs(120_000),
  );
});
