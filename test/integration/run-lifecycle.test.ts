import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_QUEUE } from '../../shared/queues.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('a chain run through the queue', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv();
  });
  afterAll(async () => env.close());

  it('completes with every step visited once, in order', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 5 } });
    expect(queued.status).toBe('queued');
    const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
    expect(done).toMatchObject({ status: 'completed', graph: 'chain', graphVersion: '1', stepCount: 5, output: { visited: [0, 1, 2, 3, 4] }, error: null });
    const steps = await env.client.steps(queued.id);
    expect(steps.map((step) => [step.index, step.superstep, step.node, step.attempts])).toEqual([
      [0, 0, 'step', 1],
      [1, 1, 'step', 1],
      [2, 2, 'step', 1],
      [3, 3, 'step', 1],
      [4, 4, 'step', 1],
    ]);
  });

  it('runs every step as its own job on the step queue, with deterministic ids', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 4 } });
    await env.client.wait(queued.id, { timeoutMs: 20_000 });
    // The run completes at its last commit; its job is marked completed just after.
    const jobs = await eventually(async () => {
      const completed = (await env.queue(STEP_QUEUE).getJobs(['completed'])).filter((job) => job.id?.startsWith(`${queued.id}.`));
      return completed.length === 4 && completed;
    });
    const ids = jobs.map((job) => job.id).sort();
    expect(ids).toEqual([0, 1, 2, 3].map((superstep) => `${queued.id}.s${superstep}.t0`));
    for (const job of jobs.filter((job) => job.id?.startsWith(`${queued.id}.`))) {
      // Step jobs carry ids, not user content.
      expect(Object.keys(job.data).sort()).toEqual(['graph', 'node', 'runId', 'superstep', 'task']);
    }
  });

  it('emits run-start, step-start/step-end per step and run-end last', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 2 } });
    const types: string[] = [];
    for await (const event of env.client.events(queued.id)) types.push(event.type);
    expect(types).toEqual(['run-start', 'step-start', 'step-end', 'step-start', 'step-end', 'run-end']);
  });

  it('returns the same run for the same idempotency key, and separate runs for two tenants', async () => {
    const first = await env.client.enqueue({ graph: 'chain', input: { steps: 1 }, idempotencyKey: 'order-42' });
    const again = await env.client.enqueue({ graph: 'chain', input: { steps: 1 }, idempotencyKey: 'order-42' });
    const otherTenant = await env.client.enqueue({ graph: 'chain', input: { steps: 1 }, idempotencyKey: 'order-42', tenant: 'acme' });
    expect(again.id).toBe(first.id);
    expect(otherTenant.id).not.toBe(first.id);
    await env.client.wait(first.id);
    await env.client.wait(otherTenant.id);
    const steps = await env.client.steps(first.id);
    expect(steps).toHaveLength(1);
    const mine = await env.client.list({ tenant: 'acme' });
    expect(mine.runs.map((run) => run.id)).toEqual([otherTenant.id]);
  });

  it('rejects an invalid request before anything is stored', async () => {
    await expect(env.client.enqueue({ graph: 'chain', input: {}, runId: 'bad:id' })).rejects.toThrow(/runId must be 1-128 characters/);
  });

  it('fails a run whose input does not match the graph, with the field named', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 'three' } });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(done.error?.message).toMatch(/input\.steps/);
    expect(await env.client.steps(queued.id)).toEqual([]);
  });

  it('fails a run of an unknown graph and says which graphs exist', async () => {
    const queued = await env.client.enqueue({ graph: 'nope', input: {} });
    const done = await env.client.wait(queued.id);
    expect(done.error).toMatchObject({ code: 'UNKNOWN_GRAPH' });
    expect(done.error?.message).toMatch(/unknown graph 'nope'.*chain/);
  });
});
