import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_NODE } from '../../shared/contracts/job-schema.js';
import { INTAKE_QUEUE, STEP_QUEUE } from '../../shared/contracts/queues.js';
import { singleStepCommit } from '../helpers/single-step-commit.js';
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
    expect(done).toMatchObject({
      status: 'completed',
      graph: 'chain',
      graphVersion: '1',
      stepCount: 5,
      output: { visited: [0, 1, 2, 3, 4] },
      error: null,
    });
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
      const completed = (await env.queue(STEP_QUEUE).getJobs(['completed'])).filter((job) =>
        job.id?.startsWith(`${queued.id}.`),
      );
      return completed.length === 4 && completed;
    });
    const ids = jobs.map((job) => job.id).sort();
    expect(ids).toEqual([0, 1, 2, 3].map((superstep) => `${queued.id}.s${superstep}.t0`));
    for (const job of jobs.filter((job) => job.id?.startsWith(`${queued.id}.`))) {
      // Step jobs carry ids, not user content.
      expect(Object.keys(job.data).sort()).toEqual(['graph', 'node', 'runId', 'superstep', 'task']);
    }
  });

  it('a step that commits after a cancellation request keeps its commit, then the run ends cancelled', async () => {
    // Straight on the store (no step job exists for this run), so the request lands between BEGIN and COMMIT.
    const { store } = env.client;
    const id = `run_latecommit${Date.now()}`;
    await store.creation.create({
      id,
      tenant: 'default',
      graph: 'chain',
      input: { steps: 3 },
      maxSteps: 10,
      now: Date.now(),
    });
    await store.creation.admit(id, '1', { steps: 3, visited: [] }, [{ node: 'step' }], Date.now());
    const begun = await store.commits.begin(id, 0, 0, { node: 'step', superstep: 0, task: 0, attempt: 1 }, Date.now());
    // BEGIN returns the fields a step uses, the status already running.
    expect(begun).toMatchObject({
      kind: 'run',
      meta: {
        id,
        tenant: 'default',
        status: 'running',
        graph: 'chain',
        superstep: 0,
        tasks: [{ node: 'step' }],
        stepCount: 0,
        maxSteps: 10,
        tokenBudget: null,
        deadlineAt: null,
      },
    });
    expect(await store.lifecycle.requestCancel(id, Date.now())).toBe('cancelling');
    const committed = await store.commits.commit(
      singleStepCommit({ runId: id, startedAt: Date.now(), state: { visited: [0] } }),
      Date.now(),
    );
    expect(committed).toEqual({ kind: 'cancelled', index: 0 });
    expect(await env.client.get(id)).toMatchObject({
      status: 'cancelled',
      stepCount: 1,
      error: { code: 'CANCELLED', retryable: false },
    });
    const events = await store.eventLog.events(id);
    expect(events.at(-1)).toMatchObject({
      type: 'run-end',
      data: { status: 'cancelled', error: { code: 'CANCELLED' } },
    });
  });

  it("a start job's admission begins its task in the same script; a second admission begins nothing", async () => {
    const { store } = env.client;
    const id = `run_admitstart${Date.now()}`;
    await store.creation.create({
      id,
      tenant: 'default',
      graph: 'chain',
      input: { steps: 2 },
      maxSteps: 10,
      now: Date.now(),
    });
    const start = { task: 0, data: { node: 'step', superstep: 0, task: 0, attempt: 1 } };
    const first = await store.creation.admit(
      id,
      '1',
      { steps: 2, visited: [] },
      [{ node: 'step' }],
      Date.now(),
      '',
      [],
      start,
    );
    expect(first).toEqual({
      admitted: 'ok',
      started: {
        kind: 'run',
        meta: expect.objectContaining({
          id,
          status: 'running',
          graphVersion: '1',
          superstep: 0,
          tasks: [{ node: 'step' }],
        }),
        state: { base: JSON.stringify({ steps: 2, visited: [] }), changed: {} },
        memos: {},
      },
    });
    expect((await store.eventLog.events(id)).map((event) => [event.type, event.data])).toEqual([
      ['run-start', {}],
      ['step-start', start.data],
    ]);
    expect(
      await store.creation.admit(id, '1', { steps: 2, visited: [] }, [{ node: 'step' }], Date.now(), '', [], start),
    ).toEqual({ admitted: 'admitted' });
    expect(await store.eventLog.events(id)).toHaveLength(2);
  });

  it('BEGIN answers written for a parallel task whose write is stored, and run for its sibling', async () => {
    const { store } = env.client;
    const id = `run_written${Date.now()}`;
    const tasks = [{ node: 'a' }, { node: 'b' }];
    await store.creation.create({ id, tenant: 'default', graph: 'chain', input: {}, maxSteps: 10, now: Date.now() });
    await store.creation.admit(id, '1', { visited: [] }, tasks, Date.now());
    const begin = (task: number) =>
      store.commits.begin(id, 0, task, { node: tasks[task]!.node, superstep: 0, task, attempt: 1 }, Date.now());
    expect(await begin(0)).toMatchObject({ kind: 'run' });
    const at = new Date().toISOString();
    const stored = await store.commits.commit(
      {
        runId: id,
        superstep: 0,
        task: 0,
        mode: 'task',
        step: { superstep: 0, task: 0, node: 'a', attempts: 1, startedAt: at, endedAt: at },
        write: { node: 'a', update: {}, messages: [] },
        totalTasks: 2,
        outcome: { kind: 'next', tasks: [] },
        state: {},
        messages: [],
      },
      Date.now(),
    );
    expect(stored).toEqual({ kind: 'stored', index: 0, count: 1 });
    // Task 0's job delivered again (a stall): its write is there, so it does not run twice.
    expect(await begin(0)).toEqual({ kind: 'written', status: 'running' });
    expect(await begin(1)).toMatchObject({ kind: 'run' });
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
    const otherTenant = await env.client.enqueue({
      graph: 'chain',
      input: { steps: 1 },
      idempotencyKey: 'order-42',
      tenant: 'acme',
    });
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
    await expect(env.client.enqueue({ graph: 'chain', input: {}, runId: 'bad:id' })).rejects.toThrow(
      /runId must be 1-128 characters/,
    );
  });

  it('fails a run whose input does not match the graph, with the field named', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 'three' } });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(done.error?.message).toMatch(/input\.steps/);
    expect(await env.client.steps(queued.id)).toEqual([]);
    // Its start job is refused at the first attempt: a rejected input is not retried.
    const start = await eventually(async () => {
      const job = await env.queue(STEP_QUEUE).getJob(`${queued.id}.s0.t0`);
      return (await job?.getState()) === 'failed' && job;
    });
    expect(start.attemptsMade).toBe(1);
  });

  it("starts a producer's run with its first step job, which takes the run in and runs the entry node (no intake job)", async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 2 } });
    const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
    expect(done).toMatchObject({ status: 'completed', stepCount: 2 });
    const start = await env.queue(STEP_QUEUE).getJob(`${queued.id}.s0.t0`);
    expect(start?.name).toBe(START_NODE);
    expect(await env.queue(INTAKE_QUEUE).getJob(queued.id)).toBeUndefined();
    // Events and the step log name the entry node, not the start job's placeholder.
    const events = await env.client.store.eventLog.events(queued.id);
    expect(events.filter((event) => event.type === 'step-start').map((event) => event.data.node)).toEqual([
      'step',
      'step',
    ]);
    expect((await env.client.steps(queued.id)).map((step) => step.node)).toEqual(['step', 'step']);
  });

  it('refuses a graph no live worker serves, naming the graphs that are served', async () => {
    const refused = await env.client.enqueue({ graph: 'nope', input: {} }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'UNKNOWN_GRAPH' });
    expect((refused as Error).message).toMatch(/no live worker serves graph 'nope'; served: .*chain@1/);
  });

  it('fails a run of an unknown graph queued anyway once no worker served it in time, and says which graphs exist', async () => {
    const queued = await env.client.enqueue({ graph: 'nope', input: {} }, { queueUnserved: true });
    const done = await env.client.wait(queued.id);
    expect(done.error).toMatchObject({ code: 'UNKNOWN_GRAPH' });
    expect(done.error?.message).toMatch(/unknown graph 'nope'.*chain/);
  });
});
