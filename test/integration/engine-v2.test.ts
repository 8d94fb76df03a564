import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { createRedis } from '../../shared/redis/create-redis.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { allShards, shardOf, shardTag, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { singleStepCommit } from '../helpers/single-step-commit.js';
import { startTestEnv, testConfig, type TestEnv } from '../helpers/test-env.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { RunEnqueuer } from '../../shared/operations/runs/run-enqueuer.js';
import { StepQueues } from '../../shared/store/step-queues.js';

/** Engine v2 (docs/concepts/step-engine.md): one script per transition, eager dispatch, the state cache, shards. */
describe('engine v2', () => {
  let env: TestEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  /** The step queue's `active` events of one run's jobs, in order: which came by eager dispatch. */
  async function activeEvents(testEnv: TestEnv, runId: string): Promise<{ jobId: string; eager: boolean }[]> {
    const key = `${stepQueuePrefix(testEnv.config.queuePrefix, shardOf(runId, testEnv.config.shards), testEnv.config.shards)}:${STEP_QUEUE}:events`;
    const entries = await testEnv.client.store.redis.xrange(key, '-', '+');
    return entries
      .map(
        ([, fields]) =>
          Object.fromEntries(
            fields.flatMap((_value, index) => (index % 2 === 0 ? [[fields[index], fields[index + 1]]] : [])),
          ) as Record<string, string>,
      )
      .filter((event) => event.event === 'active' && event.jobId?.startsWith(`${runId}.`))
      .map((event) => ({ jobId: event.jobId!, eager: event.eager === '1' }));
  }

  it('hands a run its next step eagerly at most AGENTQ_EAGER_HOPS times in a row, then through the queue', async () => {
    env = await startTestEnv({ concurrency: 1, env: { AGENTQ_EAGER_HOPS: '3' } });
    const run = await env.client.enqueue({ graph: 'chain', input: { steps: 10 } });
    expect((await env.client.wait(run.id)).status).toBe('completed');
    const events = await activeEvents(env, run.id);
    expect(events.map((event) => event.jobId)).toEqual(
      Array.from({ length: 10 }, (_value, superstep) => `${run.id}.s${superstep}.t0`),
    );
    // s0 comes through the queue; then three eager hops (s1-s3), s4 through the queue, s5-s7, s8, s9.
    expect(events.map((event) => event.eager)).toEqual([false, true, true, true, false, true, true, true, false, true]);
    // Each eager step is still a real BullMQ job: completed, one attempt, its own id.
    const job = await env.queue(STEP_QUEUE, run.id).getJob(`${run.id}.s2.t0`);
    expect(await job?.getState()).toBe('completed');
    expect(job?.attemptsMade).toBe(1);
  });

  it('runs step jobs in priority order: no priority first (BullMQ takes the wait list first), then 1 before 10, each run eagerly through', async () => {
    const config = testConfig();
    const client = new AgentClient({ config });
    const stepQueues = new StepQueues(config.shards, config.queuePrefix, {
      connection: { url: config.redisUrl!, maxRetriesPerRequest: null },
    });
    const enqueuer = new RunEnqueuer(client.store, stepQueues, config);
    await client.get('none').catch(() => undefined); // connects the client's Redis (the enqueuer does not wait for it)
    // All four wait before any worker runs; enqueued least urgent first.
    const enqueue = async (priority?: number) =>
      (await enqueuer.enqueue({ graph: 'chain', input: { steps: 3 } }, priority === undefined ? {} : { priority }))
        .record.id;
    const batch1 = await enqueue(10);
    const urgent = await enqueue(1);
    const plain = await enqueue();
    const batch2 = await enqueue(10);
    const worker = await startWorker({
      config,
      logger: createLogger(config.logLevel),
      reconciler: false,
      concurrency: 1,
    });
    try {
      for (const id of [batch1, urgent, plain, batch2]) expect((await client.wait(id)).status).toBe('completed');
      const key = `${stepQueuePrefix(config.queuePrefix, 0, config.shards)}:${STEP_QUEUE}:events`;
      const taken = (await client.store.redis.xrange(key, '-', '+'))
        .map(
          ([, fields]) =>
            Object.fromEntries(
              fields.flatMap((_value, index) => (index % 2 === 0 ? [[fields[index], fields[index + 1]]] : [])),
            ) as Record<string, string>,
        )
        .filter((event) => event.event === 'active')
        .map((event) => event.jobId!.slice(0, event.jobId!.indexOf('.s')));
      // Concurrency 1: each run's three steps in a row, runs in priority order (FIFO within a priority).
      expect(taken).toEqual([plain, urgent, batch1, batch2].flatMap((id) => [id, id, id]));
      const job = await stepQueues.forRun(urgent).getJob(`${urgent}.s2.t0`);
      expect(job?.priority).toBe(1);
    } finally {
      await worker.close();
      await stepQueues.close();
      await client.close();
    }
  });

  it('with AGENTQ_EAGER_HOPS=0 every step goes through the queue', async () => {
    env = await startTestEnv({ concurrency: 1, env: { AGENTQ_EAGER_HOPS: '0' } });
    const run = await env.client.enqueue({ graph: 'chain', input: { steps: 4 } });
    expect((await env.client.wait(run.id)).status).toBe('completed');
    const events = await activeEvents(env, run.id);
    expect(events).toHaveLength(4);
    expect(events.some((event) => event.eager)).toBe(false);
  });

  it('BEGIN sends the state when another worker committed since the cached cursor, and none when the cache is current', async () => {
    env = await startTestEnv({ env: { AGENTQ_EAGER_HOPS: '0' } });
    const { store } = env.client;
    const run = await env.client.enqueue({ graph: 'chain', input: { steps: 3 } });
    expect((await env.client.wait(run.id)).status).toBe('completed');
    // A fresh run taken in by hand, so this test plays both workers.
    const runId = `${run.id}-cache`;
    await store.creation.create({
      id: runId,
      tenant: 'default',
      graph: 'chain',
      input: { steps: 3 },
      maxSteps: 10,
      now: Date.now(),
    });
    await store.creation.admit(runId, '1', { steps: 3, visited: [] }, [{ node: 'step' }], Date.now());
    const first = await store.commits.begin(runId, 0, 0, {}, Date.now());
    expect(first).toMatchObject({ kind: 'run', state: { base: JSON.stringify({ steps: 3, visited: [] }) } });
    // "Worker A" holds the state at superstep 0; "worker B" commits step 0.
    const committed = await store.commits.commit(singleStepCommit({ runId, state: { visited: ['step'] } }), Date.now());
    expect(committed.kind).toBe('advanced');
    // A's cache says superstep 0, the cursor says 1: BEGIN sends the state B wrote.
    const stale = await store.commits.begin(runId, 1, 0, {}, Date.now(), 0);
    expect(stale.kind === 'run' && stale.state && JSON.parse(stale.state.base)).toEqual({
      steps: 3,
      visited: ['step'],
    });
    // A cache at the cursor gets no copy.
    const current = await store.commits.begin(runId, 1, 0, {}, Date.now(), 1);
    expect(current).toMatchObject({ kind: 'run', state: null });
  });

  it('spreads runs over AGENTQ_SHARDS step queues, each run with its keys and jobs under one shard tag', async () => {
    env = await startTestEnv({ env: { AGENTQ_SHARDS: '3' } });
    const runs = await Promise.all(
      Array.from({ length: 12 }, () => env!.client.enqueue({ graph: 'chain', input: { steps: 3 } })),
    );
    for (const run of runs) expect((await env.client.wait(run.id)).status).toBe('completed');
    const shards = new Set(runs.map((run) => shardOf(run.id, 3)));
    expect(shards.size).toBeGreaterThan(1);
    for (const run of runs) {
      const shard = shardOf(run.id, 3);
      const tag = shardTag(shard, 3);
      expect(tag).toMatch(new RegExp(`^\\{s${shard}(-\\d+)?\\}$`));
      expect(env.client.store.keys.run(run.id).meta).toBe(`${env.config.keyPrefix}:${tag}:run:${run.id}:meta`);
      const job = await env.queue(STEP_QUEUE, run.id).getJob(`${run.id}.s2.t0`);
      expect(await job?.getState()).toBe('completed');
      expect(job?.queueQualifiedName).toBe(`${env.config.queuePrefix}:${tag}:${STEP_QUEUE}`);
    }
    // No other shard's queue holds a run's jobs.
    for (const run of runs) {
      for (const shard of allShards(3).filter((shard) => shard !== shardOf(run.id, 3))) {
        expect(await env.queue(STEP_QUEUE, shard).getJob(`${run.id}.s0.t0`)).toBeUndefined();
      }
    }
  });

  it('refuses to start a worker while step jobs wait in a shard queue of the previous (unbalanced) shard tags', async () => {
    env = await startTestEnv({ env: { AGENTQ_SHARDS: '3' } });
    // Shard 0 of 3 is tagged {s0-1} now; the previous layout's {s0} queue still holds a job.
    expect(shardTag(0, 3)).not.toBe('{s0}');
    const old = new Queue(STEP_QUEUE, {
      connection: { url: env.config.redisUrl!, maxRetriesPerRequest: null },
      prefix: `${env.config.queuePrefix}:{s0}`,
    });
    try {
      await old.add('step', { runId: 'r1', superstep: 0, task: 0 });
      await expect(
        startWorker({ config: env.config, logger: createLogger('silent'), reconciler: false }),
      ).rejects.toThrow(/previous shard layout.*Let the previous version finish/);
    } finally {
      await old.obliterate({ force: true });
      await old.close();
    }
  });

  it('refuses AGENTQ_SHARDS that is not a whole number of at least 1, naming the variable', () => {
    for (const value of ['0', 'two', '1.5', '-1']) {
      expect(() => loadConfig({ AGENTQ_SHARDS: value })).toThrow(/AGENTQ_SHARDS/);
    }
  });

  it('refuses to start a worker whose AGENTQ_SHARDS differs from the deployment’s, saying what to set', async () => {
    env = await startTestEnv({ env: { AGENTQ_SHARDS: '2' } });
    const config = { ...env.config, shards: 3 };
    await expect(startWorker({ config, logger: createLogger('silent'), reconciler: false })).rejects.toThrow(
      /AGENTQ_SHARDS is 3 here, but this deployment runs 2 shards.*set AGENTQ_SHARDS=2/,
    );
  });

  it('refuses to start on a Redis holding first-engine runs in flight, and says to drain them', async () => {
    const config = testConfig();
    const redis = createRedis(config.redisUrl, 'worker');
    const store = new RedisRunStore(redis, { keyPrefix: config.keyPrefix });
    try {
      await redis.zadd(store.keys.activeRuns(), Date.now(), 'old-run');
      await redis.hset(store.keys.legacyRunMeta('old-run'), 'id', 'old-run', 'status', 'running');
      await expect(startWorker({ config, logger: createLogger('silent'), reconciler: false })).rejects.toThrow(
        /first engine layout still in flight \(e\.g\. run old-run\).*Drain them first/,
      );
      // Drained (the old run finished): the worker starts.
      await redis.hset(store.keys.legacyRunMeta('old-run'), 'status', 'completed');
      const worker = await startWorker({ config, logger: createLogger('silent'), reconciler: false });
      await worker.close();
    } finally {
      redis.disconnect();
    }
  });
});
