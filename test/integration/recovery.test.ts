import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepJobId, type StepJobData } from '../../shared/contracts/job-schema.js';
import { INTAKE_QUEUE, STEP_QUEUE } from '../../shared/contracts/queues.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { Calls, threeStepGraph } from '../helpers/test-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('duplicates, lost jobs, shutdown and retention', () => {
  const calls = new Calls();
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({
      graphs: [threeStepGraph(calls, new Set())],
      // chain@9 (no worker has it) waits for a worker that serves it, as an unknown graph does.
      env: { AGENTQ_RECONCILE_AFTER_MS: '100', AGENTQ_UNSERVED_GRAPH_WAIT_MS: '60000' },
    });
  });
  afterAll(async () => env.close());

  it('drops a stale duplicate of a committed step without running its node', async () => {
    const queued = await env.client.enqueue({ graph: 'three', input: null, runId: 'dup-1' });
    await env.client.wait(queued.id);
    expect(calls.of(queued.id, 'a')).toBe(1);
    const steps = env.queue(STEP_QUEUE);
    // Re-deliveries of step a (superstep 0) and of step b, long after both were committed.
    const data: StepJobData = { runId: queued.id, superstep: 0, task: 0, node: 'a', graph: 'three@1' };
    const duplicate = await steps.add('a', data, { jobId: 'dup-1-again-s0' });
    const duplicateB = await steps.add('b', { ...data, superstep: 1, node: 'b' }, { jobId: 'dup-1-again-s1' });
    await eventually(
      async () => (await duplicate.getState()) === 'completed' && (await duplicateB.getState()) === 'completed',
    );
    expect([calls.of(queued.id, 'a'), calls.of(queued.id, 'b'), calls.of(queued.id, 'c')]).toEqual([1, 1, 1]);
    expect(await env.client.steps(queued.id)).toHaveLength(3);
    expect((await steps.getJob('dup-1-again-s0'))?.returnvalue).toBe('skip');
  });

  it('a duplicate of the step just committed only makes sure the next step job exists', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 3, sleepMs: 300 } });
    await eventually(async () => ((await env.client.get(queued.id))?.stepCount ?? 0) >= 1);
    const steps = env.queue(STEP_QUEUE);
    const duplicate = await steps.add(
      'step',
      { runId: queued.id, superstep: 0, task: 0, node: 'step', graph: 'chain@1' },
      { jobId: `${queued.id}-dup` },
    );
    const done = await env.client.wait(queued.id);
    expect(done.output).toEqual({ visited: [0, 1, 2] });
    expect(['handoff', 'stale']).toContain((await steps.getJob(duplicate.id!))?.returnvalue);
    expect((await env.client.steps(queued.id)).map((step) => step.superstep)).toEqual([0, 1, 2]);
  });

  it('the reconciler re-enqueues a run whose waiting step job was deleted', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 4, sleepMs: 300 } });
    await eventually(async () => ((await env.client.get(queued.id))?.stepCount ?? 0) >= 1);
    // Stop the worker (its active step finishes and hands on), then lose the next step job.
    await env.worker.close();
    const meta = await env.client.store.reads.get(queued.id);
    expect(meta?.status).toBe('running');
    const pending = await env.queue(STEP_QUEUE).getJob(stepJobId(queued.id, meta!.superstep, 0));
    expect(await pending?.getState()).toBe('waiting');
    await pending!.remove();
    env.worker = await startWorker({ config: env.config, logger: createLogger('silent'), reconciler: false });
    await new Promise((resolve) => setTimeout(resolve, 300)); // older than AGENTQ_RECONCILE_AFTER_MS
    const report = await env.worker.sweep();
    expect(report.requeued).toBe(1);
    const done = await env.client.wait(queued.id, { timeoutMs: 10_000 });
    expect(done.output).toEqual({ visited: [0, 1, 2, 3] });
  });

  it('the reconciler leaves a queued run to its live start job, and re-sends one whose start job was lost', async () => {
    // No worker has chain@9: its start jobs are deferred (delayed, live) and the runs stay queued.
    const deferred = await env.client.enqueue(
      { graph: 'chain', graphVersion: '9', input: { steps: 1 } },
      { queueUnserved: true },
    );
    const lost = await env.client.enqueue(
      { graph: 'chain', graphVersion: '9', input: { steps: 1 } },
      { queueUnserved: true },
    );
    const startJob = (runId: string) => env.queue(STEP_QUEUE).getJob(stepJobId(runId, 0, 0));
    await eventually(async () => (await (await startJob(lost.id))?.getState()) === 'delayed');
    await (await startJob(lost.id))!.remove();
    await new Promise((resolve) => setTimeout(resolve, 300)); // older than AGENTQ_RECONCILE_AFTER_MS
    const report = await env.worker.sweep();
    expect(report.requeued).toBe(1);
    expect(await env.queue(INTAKE_QUEUE).getJob(deferred.id)).toBeUndefined();
    expect(await env.queue(INTAKE_QUEUE).getJob(lost.id)).toBeDefined();
    for (const run of [deferred, lost]) expect((await env.client.cancel(run.id)).status).toBe('cancelled');
  });

  it('graceful shutdown releases a step that outlives the grace period without spending an attempt', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 2, sleepMs: 3000 } });
    await eventually(async () => (await env.client.get(queued.id))?.status === 'running');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await env.worker.close(); // grace is 2 s in tests, the step needs 3 s
    const job = await env.queue(STEP_QUEUE).getJob(stepJobId(queued.id, 0, 0));
    expect(['delayed', 'waiting']).toContain(await job?.getState());
    expect(job?.attemptsMade).toBe(0);
    env.worker = await startWorker({ config: env.config, logger: createLogger('silent'), reconciler: false });
    const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
    expect(done.output).toEqual({ visited: [0, 1] });
    expect((await env.client.steps(queued.id)).map((step) => step.attempts)).toEqual([1, 1]);
  });

  it('finished runs expire after the retention period; purge deletes one at once', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 1 } });
    await env.client.wait(queued.id);
    const ttl = await env.client.store.redis.ttl(env.client.store.keys.run(queued.id).meta);
    expect(ttl).toBeGreaterThan(env.config.retentionSeconds - 60);
    expect(ttl).toBeLessThanOrEqual(env.config.retentionSeconds);
    await env.client.purge(queued.id);
    expect(await env.client.get(queued.id)).toBeNull();
    expect((await env.client.list()).runs.map((run) => run.id)).not.toContain(queued.id);
  });

  it('refuses to purge a run that has not finished', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 2, sleepMs: 2000 } });
    await expect(env.client.purge(queued.id)).rejects.toThrow(/cancel it before purging/);
    await env.client.cancel(queued.id);
    await env.client.wait(queued.id);
  });
});
