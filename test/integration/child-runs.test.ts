import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildLinks } from '../../shared/store/child-links.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * Child runs (context.runGraph / runGraphs) on a real worker and Redis: the parent's step parks while its
 * children run, holding no worker, and the last child's end wakes it once.
 */
describe('child runs', () => {
  let env: TestEnv;
  let links: ChildLinks;
  beforeAll(async () => {
    env = await startTestEnv({
      graphs: [childDoubleGraph(), parentSumGraph()],
      // A lost wake-up would show as a wait this long: no test here finishes if one is lost.
      env: { AGENTQ_CHILD_RUN_PARK_MS: '600000', AGENTQ_TENANT_MAX_INFLIGHT: '1' },
    });
    links = new ChildLinks(env.client.store.redis, env.client.store.keys);
  });
  afterAll(async () => env?.close());

  const childOf = async (parentId: string) => {
    const page = await links.list(parentId);
    expect(page.total).toBe(1);
    return page.children[0]!;
  };

  it("parks the parent until its child ends, then returns the child's output; both records name each other", async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [21] } });
    const done = await env.client.wait(parent.id);
    expect(done).toMatchObject({ status: 'completed', output: { sum: 42, error: null } });
    const link = await childOf(parent.id);
    expect(link).toMatchObject({ graph: 'child-double', step: 's0.t0', wait: true });
    const child = await env.client.get(link.runId);
    expect(child).toMatchObject({
      status: 'completed',
      output: { doubled: 42 },
      parentRunId: parent.id,
      parentStep: 's0.t0',
    });
    // The tenant's in-flight cap (1) is held by the waiting parent: the child ran under its slot.
    const events = await env.client.store.eventLog.events(parent.id);
    const parked = events.filter((event) => event.type === 'step-parked');
    expect(parked).toHaveLength(1);
    expect(parked[0]!.data.waitingOn).toMatchObject({ childRuns: { waiting: 1, of: 1, first: link.runId } });
    // Run once more after the wake-up, committed once.
    expect((await env.client.steps(parent.id)).map((step) => step.node)).toEqual(['call']);
  });

  it('a failed child surfaces in the parent as CHILD_RUN_FAILED carrying its code and message', async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [5], mode: 'fail' } });
    const done = await env.client.wait(parent.id);
    const link = await childOf(parent.id);
    expect(done.output).toMatchObject({
      error: {
        code: 'CHILD_RUN_FAILED',
        details: {
          childRunId: link.runId,
          graph: 'child-double',
          status: 'failed',
          error: { code: 'TOOL_ERROR', message: 'child 5 was asked to fail' },
        },
      },
    });
  });

  it('wait: false returns the child ids at once; the children run on their own', async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [1, 2], detach: true } });
    const done = await env.client.wait(parent.id);
    const ids = (done.output as { children: string[] }).children;
    expect(ids).toHaveLength(2);
    for (const id of ids)
      expect(await env.client.wait(id)).toMatchObject({ status: 'completed', parentRunId: parent.id });
    const events = await env.client.store.eventLog.events(parent.id);
    expect(events.filter((event) => event.type === 'step-parked')).toHaveLength(0);
  });

  it('cancelling a waiting parent cancels its child', async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [3], mode: 'ask' } });
    const link = await eventually(async () => (await links.list(parent.id)).children[0], 15_000, 'the child');
    await eventually(async () => (await env.client.get(link.runId))?.status === 'waiting', 15_000, 'the child waiting');
    await eventually(async () => (await links.waiting(parent.id, 's0.t0')) === 1, 15_000, 'the parent waiting');
    expect((await env.client.cancel(parent.id)).status).toBe('cancelled');
    const child = await eventually(
      async () => {
        const record = await env.client.get(link.runId);
        return record?.status === 'cancelled' && record;
      },
      15_000,
      'the child cancelled',
    );
    expect(child.error).toMatchObject({ code: 'CANCELLED' });
  });

  it("cancelling a child makes the waiting parent's call throw", async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [4], mode: 'ask' } });
    const link = await eventually(async () => (await links.list(parent.id)).children[0], 15_000, 'the child');
    await eventually(async () => (await env.client.get(link.runId))?.status === 'waiting', 15_000, 'the child waiting');
    await env.client.cancel(link.runId);
    const done = await env.client.wait(parent.id);
    expect(done).toMatchObject({
      status: 'completed',
      output: { error: { code: 'CHILD_RUN_FAILED', details: { status: 'cancelled', error: { code: 'CANCELLED' } } } },
    });
  });

  it('the same step run again finds the children it started: each child is created once', async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [7, 8, 9] } });
    const done = await env.client.wait(parent.id);
    expect(done.output).toMatchObject({ sum: 48 });
    const page = await links.list(parent.id, { limit: 10 });
    expect(page.total).toBe(3);
    expect(new Set(page.children.map((child) => child.runId)).size).toBe(3);
  });

  it('fans out 1,000 children from one step and fans in: the parent parks once and is woken once', async () => {
    const ns = Array.from({ length: 1000 }, (_, index) => index);
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns } });
    const done = await env.client.wait(parent.id, { timeoutMs: 170_000 });
    expect(done).toMatchObject({ status: 'completed', output: { sum: 999 * 1000, error: null } });
    expect((await links.list(parent.id)).total).toBe(1000);
    expect(await links.waiting(parent.id, 's0.t0')).toBe(0);
    const events = await env.client.store.eventLog.events(parent.id);
    expect(events.filter((event) => event.type === 'step-parked')).toHaveLength(1);
    expect((await env.client.steps(parent.id)).map((step) => step.node)).toEqual(['call']);
  }, 180_000);
});
