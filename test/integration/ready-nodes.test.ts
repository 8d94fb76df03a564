import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { WAITING_KEY } from '../../shared/graph/graph.js';
import type { StepObserver } from '../../shared/graph/step-observer.js';
import { readyGraphs } from '../helpers/ready-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** The state each committed step left, by run and node (the observer hears of it after the commit). */
const committed = new Map<string, Readonly<Record<string, unknown>>>();
const observer: StepObserver = {
  onNodeEnd(observation) {
    if (observation.outcome === 'ok' && observation.state)
      committed.set(`${observation.runId}/${observation.node}`, observation.state);
  },
};

describe('ready(state) on a node, on a worker with parallel branches', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: readyGraphs(), observers: [observer] });
  });
  afterAll(async () => env.close());

  const placed = async (runId: string) =>
    (await env.client.steps(runId))
      .sort((a, b) => a.superstep - b.superstep || a.task - b.task)
      .map((step) => `${step.superstep}:${step.node}`);

  it('a fans out to b and c; c waits for b and runs after b commits, with no job while it waits', async () => {
    const queued = await env.client.enqueue({ graph: 'ready-fan', input: null });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ log: ['a', 'b', 'c'], bDone: true, b2Done: false, sawReady: true });
    expect(await placed(queued.id)).toEqual(['0:a', '1:b', '2:c']);
    // a's commit kept c waiting in the state: superstep 1 had one job (b's), superstep 2 one (c's).
    const jobs = await eventually(async () => {
      const ids = (await env.queue(STEP_QUEUE, queued.id).getJobs(['completed']))
        .map((job) => job.id!)
        .filter((id) => id.startsWith(`${queued.id}.`));
      return ids.length === 3 && ids.sort();
    });
    expect(jobs).toEqual([`${queued.id}.s0.t0`, `${queued.id}.s1.t0`, `${queued.id}.s2.t0`]);
    const afterA = await eventually(async () => committed.get(`${queued.id}/a`), 15_000, "a's observation");
    expect(afterA[WAITING_KEY]).toEqual([{ node: 'c' }]);
    const afterB = await eventually(async () => committed.get(`${queued.id}/b`), 15_000, "b's observation");
    expect(afterB[WAITING_KEY]).toEqual([]);
  });

  it('a waiting node is asked again after each commit (an inline step included)', async () => {
    const queued = await env.client.enqueue({ graph: 'ready-chain', input: null });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('completed');
    expect(done.output).toMatchObject({ log: ['a', 'b', 'b2', 'c'], sawReady: true });
    expect(await placed(queued.id)).toEqual(['0:a', '1:b', '2:b2', '3:c']);
  });

  it('a join waiting for both branches runs once, after the longer branch (parallel superstep advance)', async () => {
    const queued = await env.client.enqueue({ graph: 'ready-join', input: null });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('completed');
    expect(done.output).toMatchObject({ log: ['a', 'b', 'c', 'c2', 'd'], sawReady: true });
    expect(await placed(queued.id)).toEqual(['0:a', '1:b', '1:c', '2:c2', '3:d']);
  });

  it('a node never ready fails the run with NODE_NOT_READY naming it: never completed, never stuck', async () => {
    const queued = await env.client.enqueue({ graph: 'ready-never', input: null });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'NODE_NOT_READY', retryable: false, details: { nodes: ['c'] } });
    expect(done.error!.message).toMatch(/'c' is still not ready/);
    expect((await env.client.steps(queued.id)).map((step) => step.node)).not.toContain('c');
  });

  it('an entry node not ready on the initial state fails the run at intake', async () => {
    const queued = await env.client.enqueue({ graph: 'ready-entry', input: null });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'NODE_NOT_READY', details: { nodes: ['x'] } });
  });

  it('a fork from the step after the fan-out carries the waiting task: c still runs after b', async () => {
    const original = await env.client.enqueue({ graph: 'ready-fan', input: null });
    expect((await env.client.wait(original.id)).status).toBe('completed');
    const fork = await env.client.fork(original.id, { from: 1 });
    const done = await env.client.wait(fork.id);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ log: ['a', 'b', 'c'], bDone: true, b2Done: false, sawReady: true });
    expect(await placed(fork.id)).toEqual(['0:a', '1:b', '2:c']);
  });
});
