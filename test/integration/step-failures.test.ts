import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTAKE_QUEUE, STEP_QUEUE } from '../../shared/contracts/queues.js';
import { Calls, slowGraph, threeStepGraph } from '../helpers/test-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { START_NODE, stepJobId } from '../../shared/contracts/job-schema.js';

describe('step failures, guards and cancellation', () => {
  const calls = new Calls();
  const failing = new Set<string>();
  const aborts = new Map<string, { at: number; reason: string }>();
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [threeStepGraph(calls, failing), slowGraph(calls, aborts, 300)] });
  });
  afterAll(async () => env.close());

  it('retries a failing step with exponential backoff, then succeeds (failTimes)', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 2, failTimes: 2 } });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ visited: [0, 1] });
    const steps = await env.client.steps(queued.id);
    expect(steps.map((step) => step.attempts)).toEqual([3, 3]);
    const events = [];
    for await (const event of env.client.events(queued.id)) events.push(event);
    const retries = events.filter((event) => event.type === 'step-retry');
    expect(retries).toHaveLength(4);
    expect(retries[0]!.data).toMatchObject({ node: 'step', attempt: 1, error: { code: 'INTERNAL', retryable: true } });
    // The gaps follow the chain node's policy: 200 ms then 400 ms, each jittered to no less than half.
    const starts = events
      .filter((event) => event.type === 'step-start' && event.data.superstep === 0)
      .map((event) => Number(event.id.split('-')[0]));
    expect(starts).toHaveLength(3);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(100);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(200);
  });

  it('fails the run once the retry policy is spent, with the attempt on the error', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 1, failTimes: 50 } });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'INTERNAL', node: 'step', attempt: 5 });
    // The run fails at its last attempt; BullMQ marks the job failed (and counts that attempt) just after
    // the processor throws, so read until both show.
    const job = await eventually(
      async () => {
        const found = await env.queue(STEP_QUEUE).getJob(stepJobId(queued.id, 0, 0));
        return (await found?.getState()) === 'failed' && found!.attemptsMade === 5 && found;
      },
      15_000,
      'the step job failed after its 5th attempt',
    );
    expect(job.attemptsMade).toBe(5);
    // It was the run's start job (10 attempts, node unknown when added): it stopped at the node's own
    // maxAttempts, and names the node in its data so BullMQ's backoff used the node's policy.
    expect(job.name).toBe(START_NODE);
    expect(job.opts.attempts).toBe(10);
    expect(job.data.node).toBe('step');
  });

  it('fails the run at attempt 1 on a non-retryable error, keeping what was committed', async () => {
    const queued = await env.client.enqueue({ graph: 'three', input: null, runId: 'nonretry-1' });
    failing.add(queued.id);
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'TOOL_ERROR', node: 'b', attempt: 1, retryable: false });
    expect(calls.of(queued.id, 'b')).toBe(1);
    expect(await env.client.store.reads.state(queued.id)).toEqual({ log: ['a'] });
  });

  it('retries a failed run from its last commit: committed steps do not run again', async () => {
    const queued = await env.client.enqueue({ graph: 'three', input: null, runId: 'retry-1' });
    failing.add(queued.id);
    expect((await env.client.wait(queued.id)).status).toBe('failed');
    failing.delete(queued.id);
    const retried = await env.client.retry(queued.id);
    expect(retried.status).toBe('running');
    const done = await env.client.wait(queued.id);
    expect(done).toMatchObject({ status: 'completed', output: ['a', 'b', 'c'], error: null });
    expect([calls.of(queued.id, 'a'), calls.of(queued.id, 'b'), calls.of(queued.id, 'c')]).toEqual([1, 2, 1]);
    await expect(env.client.retry(queued.id)).rejects.toThrow(/is completed; only a failed run can be retried/);
  });

  it('aborts a step at its timeout, retries it, then fails with TIMEOUT', async () => {
    const queued = await env.client.enqueue({ graph: 'slow', input: null });
    const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'TIMEOUT', node: 'wait', attempt: 2 });
    expect(done.error?.message).toMatch(/exceeded its timeout of 300 ms/);
    expect(calls.of(queued.id, 'wait')).toBe(2);
  });

  it('stops a run at maxSteps with MAX_STEPS, keeping its context', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 10 }, options: { maxSteps: 3 } });
    const done = await env.client.wait(queued.id);
    expect(done).toMatchObject({ status: 'failed', stepCount: 3, error: { code: 'MAX_STEPS' } });
    expect((await env.client.store.reads.state(queued.id)).visited).toEqual([0, 1, 2]);
  });

  it('stops a run at its deadline with DEADLINE', async () => {
    const queued = await env.client.enqueue({
      graph: 'chain',
      input: { steps: 100, sleepMs: 100 },
      options: { deadlineMs: 600 },
    });
    const done = await env.client.wait(queued.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'DEADLINE' } });
    expect(done.stepCount).toBeLessThan(10);
  });

  it('cancels mid-step: the running node is aborted within a second and the last commit is kept', async () => {
    const noTimeout = await startTestEnv({ graphs: [slowGraph(calls, aborts)], builtInGraphs: false });
    try {
      const queued = await noTimeout.client.enqueue({ graph: 'slow', input: null });
      await eventually(async () => calls.of(queued.id, 'wait') === 1, 10_000, 'the slow step to start');
      const cancelledAt = Date.now();
      const after = await noTimeout.client.cancel(queued.id);
      expect(['cancelling', 'cancelled']).toContain(after.status);
      const done = await noTimeout.client.wait(queued.id, { timeoutMs: 5000 });
      expect(done.status).toBe('cancelled');
      expect(done.error).toMatchObject({ code: 'CANCELLED' });
      const abort = aborts.get(queued.id);
      expect(abort?.reason).toMatch(/cancelled/);
      expect(abort!.at - cancelledAt).toBeLessThan(1000);
      expect(await noTimeout.client.store.reads.state(queued.id)).toEqual({ before: 'kept', done: false });
      expect(calls.of(queued.id, 'wait')).toBe(1);
    } finally {
      await noTimeout.close();
    }
  });

  it('cancels a run whose next step is still waiting in the queue at once', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 3, failTimes: 3 } });
    await eventually(async () => (await env.client.get(queued.id))?.status === 'running');
    const done = await env.client.cancel(queued.id);
    const final = done.status === 'cancelled' ? done : await env.client.wait(queued.id, { timeoutMs: 5000 });
    expect(final.status).toBe('cancelled');
  });

  it('fails an invalid raw job from another service once, with the reason on the run', async () => {
    const intake = new Queue(INTAKE_QUEUE, {
      connection: { url: env.config.redisUrl! },
      prefix: env.config.queuePrefix,
    });
    try {
      await intake.add(
        'anything',
        { v: 2, graph: 'chain', input: { steps: 1 }, runId: 'raw-bad-1' },
        { attempts: 3, jobId: 'raw-bad-1' },
      );
      await intake.add(
        'anything',
        { v: 1, graph: 'chain', input: { steps: -1 }, runId: 'raw-bad-2' },
        { attempts: 3, jobId: 'raw-bad-2' },
      );
      const badVersionDone = await eventually(() =>
        env.client.get('raw-bad-1').then((r) => (r?.status === 'failed' ? r : undefined)),
      );
      expect(badVersionDone).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
      expect(badVersionDone.error?.message).toMatch(/v: v must be 1/);
      const badInput = await eventually(() =>
        env.client.get('raw-bad-2').then((r) => (r?.status === 'failed' ? r : undefined)),
      );
      expect(badInput.error?.message).toMatch(/input\.steps/);
      for (const id of ['raw-bad-1', 'raw-bad-2']) {
        // The run is failed first, then BullMQ fails the job: read until it has.
        const job = await eventually(
          async () => {
            const found = await intake.getJob(id);
            return (await found?.getState()) === 'failed' && found;
          },
          15_000,
          `intake job ${id} to fail`,
        );
        expect(job.attemptsMade).toBe(1);
      }
      expect(await env.client.steps('raw-bad-2')).toEqual([]);
    } finally {
      await intake.close();
    }
  });

  it('runs a valid raw job added with plain BullMQ, under the runId it names', async () => {
    const intake = new Queue(INTAKE_QUEUE, {
      connection: { url: env.config.redisUrl! },
      prefix: env.config.queuePrefix,
    });
    try {
      await intake.add('from-billing-service', {
        v: 1,
        graph: 'chain',
        input: { steps: 2 },
        runId: 'raw-ok-1',
        tenant: 'billing',
      });
      const record = await eventually(() => env.client.get('raw-ok-1').then((r) => r ?? undefined));
      const done = await env.client.wait(record.id);
      expect(done).toMatchObject({
        id: 'raw-ok-1',
        tenant: 'billing',
        status: 'completed',
        output: { visited: [0, 1] },
      });
    } finally {
      await intake.close();
    }
  });
});
