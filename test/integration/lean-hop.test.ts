import { afterEach, describe, expect, it } from 'vitest';
import { STEP_QUEUE } from '../../shared/queues.js';
import { shardOf, stepQueuePrefix } from '../../shared/shards.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * The lean hop (shared/redis/step-transition-scripts.ts, LEAN_HOP): an eager hand-over and the finish of
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
    const jobs = await Promise.all([0, 1, 2, 3].map((superstep) => redis.hgetall(`${prefix}${run.id}.s${superstep}.t0`)));
    const events = new Map<string, string[]>();
    for (const [, fields] of await redis.xrange(`${prefix}events`, '-', '+')) {
      const event = Object.fromEntries(fields.flatMap((_value, index) => (index % 2 === 0 ? [[fields[index], fields[index + 1]]] : []))) as Record<string, string>;
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
      for (const field of ['name', 'delay', 'priority', 'ats', 'atm', 'returnvalue', 'pb']) expect(ours[field], field).toBe(theirs[field]);
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
});
