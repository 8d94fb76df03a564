import { Queue } from 'bullmq';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import { stepQueuePrefix } from '../../shared/contracts/shards.js';
import { startWorker } from '../../worker/start-worker.js';
import { StepTransitions } from '../../worker/engine/step-transitions.js';
import { StepWorker, TAKE_BATCH_MAX } from '../../worker/engine/step-worker.js';
import { eventually, testConfig } from '../helpers/test-env.js';

/**
 * Cold fetches (shared/bullmq/taking-worker.ts, TakingWorker's main loop, StepWorker.takeJobs; STEP_TAKE in step-transition-scripts.ts):
 * a worker with several free slots fills them with one take script of up to TAKE_BATCH_MAX jobs, each
 * locked with a token of its own and begun; and a job handed back by eager dispatch runs in the slot of
 * the step before it, without a turn of the main loop.
 */
describe('cold fetches', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('take up to `count` waiting jobs in one script, each locked with its own token and begun', async () => {
    const config = testConfig();
    const client = new AgentClient({ config });
    closers.push(() => client.close());
    const redis = connectRedis(config, 'worker');
    closers.push(() => redis.quit());
    const prefix = stepQueuePrefix(config.queuePrefix, 0, config.shards);
    const queue = new Queue(STEP_QUEUE, { connection: { url: config.redisUrl!, maxRetriesPerRequest: null }, prefix });
    closers.push(() => queue.close());
    await client.get('none').catch(() => undefined); // connects the client's Redis
    const { store } = client;
    const transitions = new StepTransitions({
      store,
      redis,
      queuePrefix: config.queuePrefix,
      shards: config.shards,
      lockDurationMs: 30_000,
      keepCompletedJobs: 10,
      attemptsOf: () => 4,
    });
    const runIds: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const runId = `take-${index}-${Date.now()}`;
      runIds.push(runId);
      await store.creation.create({
        id: runId,
        tenant: 'default',
        graph: 'chain',
        input: { steps: 2 },
        maxSteps: 10,
        now: Date.now(),
      });
      await store.creation.admit(runId, '1', { steps: 2, visited: [] }, [{ node: 'step' }], Date.now());
      await queue.add(
        'step',
        { runId, superstep: 0, task: 0, node: 'step', graph: 'chain@1' },
        { jobId: `${runId}.s0.t0`, attempts: 4 },
      );
    }

    const first = await transitions.take(0, 'tok', undefined, 1000, 3);
    expect(first.map((taken) => taken.token)).toEqual(['tok', 'tok.2', 'tok.3']);
    // In the wait list's order (BullMQ's: first added, first taken), each with its run's cursor.
    expect(first.map((taken) => taken.handed.next[1])).toEqual(runIds.slice(0, 3).map((runId) => `${runId}.s0.t0`));
    expect(first.map((taken) => taken.handed.begin?.kind)).toEqual(['run', 'run', 'run']);
    for (const taken of first)
      expect(await redis.get(`${prefix}:${STEP_QUEUE}:${taken.handed.next[1] as string}:lock`)).toBe(taken.token);
    expect(await queue.getJobCounts('active', 'wait')).toEqual({ active: 3, wait: 2 });
    // The step of each taken job began: its run is running; a run not taken is still queued.
    expect((await store.reads.get(runIds[0]!))?.status).toBe('running');
    expect((await store.reads.get(runIds[3]!))?.status).toBe('queued');

    // Asked for more than wait: the two left, then moveToActive's reply that took nothing (no cursor).
    const rest = await transitions.take(0, 'tok2', undefined, 1000, 5);
    expect(rest).toHaveLength(3);
    expect(rest.slice(0, 2).map((taken) => taken.handed.next[1])).toEqual(
      runIds.slice(3).map((runId) => `${runId}.s0.t0`),
    );
    expect(rest[2]!.handed.next[0]).toBeFalsy(); // no job fields
    expect(rest[2]!.handed.begin).toBeUndefined();
    expect(await queue.getJobCounts('active', 'wait')).toEqual({ active: 5, wait: 0 });
  });

  it('fill a worker’s free slots in batches, and eager hops run in the slot of the step before them', async () => {
    const config = testConfig();
    const client = new AgentClient({ config });
    closers.push(() => client.close());
    // Waiting before the worker starts: its first fetch finds all of them.
    const runs = await Promise.all(
      Array.from({ length: 12 }, () => client.enqueue({ graph: 'chain', input: { steps: 4 } })),
    );
    const take = vi.spyOn(StepTransitions.prototype, 'take');
    const processJob = vi.spyOn(StepWorker.prototype, 'processJob');
    const worker = await startWorker({
      config,
      logger: createLogger(config.logLevel),
      reconciler: false,
      concurrency: 10,
    });
    closers.push(() => worker.close());
    for (const run of runs) expect((await client.wait(run.id)).status).toBe('completed');

    const takes = await Promise.all(
      take.mock.results.map((result) => result.value as ReturnType<StepTransitions['take']>),
    );
    const asked = take.mock.calls.map((call) => call[4] ?? 1);
    const jobsTaken = takes.map((taken) => taken.filter((entry) => entry.handed.begin).length);
    // The first fetch asks for every free slot (10, under TAKE_BATCH_MAX) and gets 10 start jobs at once.
    expect(TAKE_BATCH_MAX).toBeGreaterThanOrEqual(10);
    expect(asked[0]).toBe(10);
    expect(jobsTaken[0]).toBe(10);
    // The other two came by fetch-next, as the first runs finished.
    expect(jobsTaken.reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(12);
    // 12 start jobs, each run's 3 later steps handed back eagerly inside its start job's processJob call.
    expect(processJob).toHaveBeenCalledTimes(12);
  });

  it('pick up a job that comes after a batched take found the queue empty, while the other slots run long hop chains', async () => {
    // Hops without a limit here: no long run's job goes back through the queue (which would wake the loop).
    const config = testConfig({ AGENTQ_EAGER_HOPS: '1000' });
    const client = new AgentClient({ config });
    closers.push(() => client.close());
    // Slots to spare: with the long runs in three, free slots are filled by batched takes.
    const worker = await startWorker({
      config,
      logger: createLogger(config.logLevel),
      reconciler: false,
      concurrency: 10,
    });
    closers.push(() => worker.close());
    const longRun = () =>
      client.enqueue({ graph: 'chain', input: { steps: 200, sleepMs: 20 }, options: { maxSteps: 1000 } });
    const started = (runIds: string[]) =>
      eventually(
        async () =>
          (await Promise.all(runIds.map((runId) => client.get(runId)))).every(
            (record) => (record?.stepCount ?? 0) >= 1,
          ),
        15_000,
        'the long runs to start',
      );
    const long = await Promise.all([longRun(), longRun()]);
    await started(long.map((run) => run.id));
    // The next batched take finds the queue empty (as when another worker took the job first). It comes
    // right after the third long run's job is taken (by the blocking fetch, one job; its hops then mark the
    // worker not drained): the loop must go back to waiting on the queue, not wait for a slot to free.
    const take = StepTransitions.prototype.take;
    let emptyTakes = 0;
    vi.spyOn(StepTransitions.prototype, 'take').mockImplementation(async function (
      this: StepTransitions,
      ...args: Parameters<StepTransitions['take']>
    ) {
      if ((args[4] ?? 1) > 1 && emptyTakes === 0) {
        emptyTakes += 1;
        return [{ token: args[1], handed: { next: [], eager: false } }];
      }
      return take.apply(this, args);
    });
    const third = await longRun();
    long.push(third);
    await started([third.id]);
    expect(emptyTakes).toBe(1);
    const short = await client.enqueue({ graph: 'chain', input: { steps: 2 } });
    expect((await client.wait(short.id)).status).toBe('completed');
    // It did not wait for a long run to end.
    for (const run of long) expect((await client.get(run.id))?.status).toBe('running');
  });
});
