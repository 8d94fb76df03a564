import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { nextJobData } from '../../shared/bullmq/bullmq-jobs.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import { shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { StepTransitions } from '../../worker/engine/step-transitions.js';
import { singleStepCommit } from '../helpers/single-step-commit.js';
import { startTestEnv, testConfig, type TestEnv } from '../helpers/test-env.js';

/**
 * The lean hop (bullmq_lean_hop and bullmq_lean_finish in shared/bullmq/bullmq-lua.ts, called by STEP_TRANSITION): an eager hand-over and the finish of
 * the job that committed, written by agentq's copy instead of BullMQ's addStandardJob, moveToActive and
 * moveToFinished. What it leaves must be what BullMQ's own scripts leave, or Bull Board, the stalled-job
 * check and `Job` readers would see something else: these tests put a run stepped the lean way beside a
 * run stepped through BullMQ's scripts alone (AGENTQ_EAGER_HOPS=0).
 */
describe('the lean hop', () => {
  const envs: TestEnv[] = [];
  afterEach(async () => {
    await Promise.all(envs.splice(0).map((env) => env.close()));
  });

  /** One 4-step chain run; → its step jobs' hashes (s0-s3), events by job, the queue's counts and lock keys left. */
  async function stepRun(env: Record<string, string>) {
    const testEnv = await startTestEnv({ concurrency: 1, env });
    envs.push(testEnv);
    const run = await testEnv.client.enqueue({ graph: 'chain', input: { steps: 4 } });
    expect((await testEnv.client.wait(run.id)).status).toBe('completed');
    const redis = testEnv.client.store.redis;
    const prefix = `${stepQueuePrefix(testEnv.config.queuePrefix, shardOf(run.id, testEnv.config.shards), testEnv.config.shards)}:${STEP_QUEUE}:`;
    const jobs = await Promise.all(
      [0, 1, 2, 3].map((superstep) => redis.hgetall(`${prefix}${run.id}.s${superstep}.t0`)),
    );
    const events = new Map<string, string[]>();
    for (const [, fields] of await redis.xrange(`${prefix}events`, '-', '+')) {
      const event = Object.fromEntries(
        fields.flatMap((_value, index) => (index % 2 === 0 ? [[fields[index], fields[index + 1]]] : [])),
      ) as Record<string, string>;
      if (!event.jobId?.startsWith(`${run.id}.`)) continue;
      events.set(event.jobId, [...(events.get(event.jobId) ?? []), event.event!]);
    }
    const queue = testEnv.queue(STEP_QUEUE, run.id);
    const counts = await queue.getJobCounts('active', 'wait', 'completed', 'prioritized', 'delayed', 'failed');
    const job = await queue.getJob(`${run.id}.s2.t0`);
    const locks = await redis.keys(`${prefix}${run.id}.*:lock`);
    const stalled = await redis.smembers(`${prefix}stalled`);
    return { run, jobs, events, counts, job, state: await job?.getState(), locks, stalled };
  }

  it('leaves the job hashes, lists, events and locks BullMQ leaves', async () => {
    const bullmq = await stepRun({ AGENTQ_EAGER_HOPS: '0' });
    const lean = await stepRun({});
    // s0 comes through the queue either way; s1-s3 came the lean way in the second run (its events say eager).
    for (const superstep of [1, 2, 3]) {
      const ours = lean.jobs[superstep]!;
      const theirs = bullmq.jobs[superstep]!;
      expect(Object.keys(ours).sort(), `s${superstep}'s job hash fields`).toEqual(Object.keys(theirs).sort());
      expect(JSON.parse(ours.opts!)).toEqual(JSON.parse(theirs.opts!.replaceAll(bullmq.run.id, lean.run.id)));
      for (const field of ['name', 'delay', 'priority', 'ats', 'atm', 'returnvalue', 'pb'])
        expect(ours[field], field).toBe(theirs[field]);
      expect(JSON.parse(ours.data!)).toEqual(JSON.parse(theirs.data!.replaceAll(bullmq.run.id, lean.run.id)));
      for (const field of ['timestamp', 'processedOn', 'finishedOn']) expect(Number(ours[field])).toBeGreaterThan(0);
    }
    // Events: added and active for each hop, then completed; BullMQ's add also says waiting (the lean hop's
    // job never waits).
    const leanEvents = (superstep: number) => lean.events.get(`${lean.run.id}.s${superstep}.t0`);
    const bullEvents = (superstep: number) => bullmq.events.get(`${bullmq.run.id}.s${superstep}.t0`);
    expect(bullEvents(2)).toEqual(['added', 'waiting', 'active', 'completed']);
    expect(leanEvents(2)).toEqual(['added', 'active', 'completed']);
    // As BullMQ's Queue and Job (Bull Board) read them.
    expect(lean.counts).toEqual(bullmq.counts);
    expect(lean.counts).toMatchObject({ active: 0, wait: 0, completed: 4, failed: 0 });
    expect(lean.state).toBe('completed');
    expect(lean.job?.attemptsMade).toBe(1);
    expect(lean.job?.returnvalue).toEqual(bullmq.job?.returnvalue);
    expect(lean.job?.opts).toEqual({ ...bullmq.job?.opts, jobId: `${lean.run.id}.s2.t0` });
    expect(lean.locks).toEqual([]);
    expect(lean.stalled).toEqual([]);
  });

  it('trims the completed jobs to AGENTQ_KEEP_COMPLETED_JOBS as moveToFinished does, deleting the trimmed jobs', async () => {
    const bullmq = await stepRun({ AGENTQ_EAGER_HOPS: '0', AGENTQ_KEEP_COMPLETED_JOBS: '2' });
    const lean = await stepRun({ AGENTQ_KEEP_COMPLETED_JOBS: '2' });
    expect(lean.counts.completed).toBe(2);
    expect(lean.counts).toEqual(bullmq.counts);
    // s0 and s1 were trimmed (their hashes gone), s2 and s3 kept, either way.
    expect(lean.jobs.map((job) => Object.keys(job).length > 0)).toEqual([false, false, true, true]);
    expect(bullmq.jobs.map((job) => Object.keys(job).length > 0)).toEqual([false, false, true, true]);
  });

  it('with AGENTQ_KEEP_COMPLETED_JOBS=0 deletes each finished step job, as moveToFinished does', async () => {
    const lean = await stepRun({ AGENTQ_KEEP_COMPLETED_JOBS: '0' });
    expect(lean.counts).toMatchObject({ active: 0, wait: 0, completed: 0 });
    expect(lean.jobs.every((job) => Object.keys(job).length === 0)).toBe(true);
  });

  it('the job and BEGIN the worker makes from its request equal what Redis holds, and the step started', async () => {
    const config = testConfig();
    const client = new AgentClient({ config });
    const redis = connectRedis(config, 'worker');
    const shard = 0;
    const queue = new Queue(STEP_QUEUE, {
      connection: { url: config.redisUrl!, maxRetriesPerRequest: null },
      prefix: stepQueuePrefix(config.queuePrefix, shard, config.shards),
    });
    try {
      await client.get('none').catch(() => undefined); // connects the client's Redis
      await new Promise((resolve) =>
        (redis as { status?: string }).status === 'ready' ? resolve(undefined) : redis.once('ready', resolve),
      );
      const { store } = client;
      const transitions = new StepTransitions({
        store,
        redis,
        queuePrefix: config.queuePrefix,
        shards: config.shards,
        lockDurationMs: 30_000,
        keepCompletedJobs: 10,
        attemptsOf: () => 4,
        workerName: 'lean-test',
      });
      const runId = `lean-${Date.now()}`;
      await store.creation.create({
        id: runId,
        tenant: 'default',
        graph: 'chain',
        input: { steps: 3 },
        maxSteps: 10,
        now: Date.now(),
      });
      await store.creation.admit(runId, '1', { steps: 3, visited: [] }, [{ node: 'step' }], Date.now());
      await queue.add(
        'step',
        { runId, superstep: 0, task: 0, node: 'step', graph: 'chain@1' },
        { jobId: `${runId}.s0.t0`, attempts: 4 },
      );
      const [taken] = (await transitions.take(shard, 'token-1', undefined, 1000)).map((job) => job.handed);
      expect(taken!.begin?.kind).toBe('run');
      const meta = taken!.begin!.kind === 'run' ? taken!.begin!.meta : undefined;
      const now = Date.now();
      const result = await transitions.commit(
        singleStepCommit({ runId, state: { visited: [0] }, usage: { inputTokens: 5, outputTokens: 7, costUsd: 0.25 } }),
        [{ node: 'step' }],
        'chain@1',
        {
          id: `${runId}.s0.t0`,
          token: 'token-1',
          attempts: 4,
          attemptsMade: 0,
          fetchNext: true,
          eager: true,
          returnValue: '"committed"',
        },
        meta!,
        { now },
      );
      expect(result.commit).toEqual({ kind: 'advanced', index: 0 });
      expect(result.handed?.eager).toBe(true);
      const hopId = `${runId}.s1.t0`;
      // The job as BullMQ's own fetch would have read it from the hash the script wrote.
      const fields = (await redis.call('HGETALL', `${queue.keys['']}${hopId}`)) as string[];
      const [fromRedis] = nextJobData([fields, hopId, 0, 0]) as [Record<string, unknown>];
      expect(result.handed?.next).toEqual([fromRedis, hopId, 0, 0]);
      expect(fromRedis).toMatchObject({
        name: 'step',
        timestamp: now,
        processedOn: now,
        attemptsStarted: 1,
        processedBy: 'lean-test',
        opts: { attempts: 4 },
      });
      expect(await redis.get(`${queue.keys['']}${hopId}:lock`)).toBe('token-1');
      // Its BEGIN as a BEGIN of the job would read it (state cached at superstep 1: none sent).
      const begun = await store.commits.begin(
        runId,
        1,
        0,
        { node: 'step', superstep: 1, task: 0, attempt: 1 },
        Date.now(),
        1,
      );
      expect(result.handed?.begin).toEqual(begun);
      expect(begun).toMatchObject({
        kind: 'run',
        meta: { superstep: 1, stepCount: 1, usage: { inputTokens: 5, outputTokens: 7, costUsd: 0.25 } },
        state: null,
      });
      // The hop's step started in the same script (its step-start event follows the commit's step-end), as
      // the BEGIN above started it again.
      const events = (await store.eventLog.events(runId)).slice(-3);
      expect(events.map((event) => event.type)).toEqual(['step-end', 'step-start', 'step-start']);
      expect(events[1]?.data).toEqual(events[2]?.data);
    } finally {
      await queue.close();
      redis.disconnect();
      await client.close();
    }
  });
});
