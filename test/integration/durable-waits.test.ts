import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { waiterGraph } from '../helpers/waiter-graph.js';

/** How often each node ran, by run: a woken step runs its node again (from the top). */
const runs = new Map<string, number>();
const count = (runId: string) => runs.set(runId, (runs.get(runId) ?? 0) + 1);

const sleeper = defineGraph({
  name: 'sleeper',
  input: undefined,
  state: { ms: channel.replace(0), sleptAt: channel.replace(0), wokeAt: channel.replace(0) },
  initialState: (input: unknown) => ({ ms: (input as { ms: number }).ms }),
  output: (state) => state,
})
  .node('nap', async (state, context) => {
    count(context.runId);
    const sleptAt = await context.memo('sleptAt', async () => Date.now());
    await context.sleep(state.ms);
    return { sleptAt, wokeAt: Date.now() };
  })
  .edge(START, 'nap')
  .edge('nap', END)
  .build();

const waiter = waiterGraph(count);

describe('durable waits: context.sleep and context.waitFor', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [sleeper, waiter] });
  });
  afterAll(async () => env.close());

  it('sleep parks the step (no attempt spent, the run stays running) and resumes after its time', async () => {
    const queued = await env.client.enqueue({ graph: 'sleeper', input: { ms: 400 } });
    const parked = await eventually(async () => {
      const events = await env.client.store.eventLog.events(queued.id);
      return events.find((event) => event.type === 'step-parked');
    });
    expect((parked.data as { waitingOn: unknown }).waitingOn).toMatchObject({ sleep: { until: expect.any(String) } });
    expect((await env.client.get(queued.id))?.status).toBe('running');
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('completed');
    const { sleptAt, wokeAt } = done.output as { sleptAt: number; wokeAt: number };
    expect(wokeAt - sleptAt).toBeGreaterThanOrEqual(400);
    // Ran twice: once to park, once woken; no retry.
    expect(runs.get(queued.id)).toBe(2);
    expect((await env.client.store.eventLog.events(queued.id)).some((event) => event.type === 'step-retry')).toBe(
      false,
    );
  });

  it('waitFor resumes with the payload of an event sent to the run', async () => {
    const queued = await env.client.enqueue({ graph: 'waiter', input: { name: 'approved', match: { order: 7 } } });
    await parkedOn(queued.id);
    // Another name and another order do not match: the step stays parked.
    expect((await env.client.sendEvent({ runId: queued.id, name: 'rejected', data: { order: 7 } })).reached).toBe(0);
    expect((await env.client.sendEvent({ runId: queued.id, name: 'approved', data: { order: 8 } })).reached).toBe(0);
    const sent = await env.client.sendEvent({ runId: queued.id, name: 'approved', data: { order: 7, by: 'ann' } });
    expect(sent).toMatchObject({ reached: 1, stored: false });
    const done = await env.client.wait(queued.id);
    expect(done.output).toEqual({ data: { order: 7, by: 'ann' }, key: null });
  });

  it('waitFor times out with a result the node branches on', async () => {
    const queued = await env.client.enqueue({ graph: 'waiter', input: { name: 'never', timeoutMs: 300 } });
    const done = await env.client.wait(queued.id);
    expect(done.output).toBe('timed out');
  });

  it('an event sent before the wait is kept and consumed by it', async () => {
    const queued = await env.client.enqueue({ graph: 'waiter', input: { name: 'early' } });
    // Sent at once: the run has not reached its wait yet (or just has); either way it gets the event once.
    const sent = await env.client.sendEvent({ runId: queued.id, name: 'early', data: { n: 1 } });
    expect(sent.reached + (sent.stored ? 1 : 0)).toBe(1);
    const done = await env.client.wait(queued.id);
    expect(done.output).toEqual({ data: { n: 1 }, key: null });
  });

  it('an event sent to a key reaches each waiting run exactly once; a second one wakes none', async () => {
    const key = `order-${Date.now()}`;
    const queued = await Promise.all(
      Array.from({ length: 20 }, () => env.client.enqueue({ graph: 'waiter', input: { name: 'paid', key } })),
    );
    for (const run of queued) await parkedOn(run.id);
    const first = await env.client.sendEvent({ key, name: 'paid', data: { amount: 5 } });
    expect(first.reached).toBe(20);
    const done = await Promise.all(queued.map((run) => env.client.wait(run.id)));
    expect(done.map((run) => run.output)).toEqual(done.map(() => ({ data: { amount: 5 }, key })));
    const second = await env.client.sendEvent({ key, name: 'paid', data: { amount: 6 } });
    expect(second.reached).toBe(0);
    // Each run's node ran twice: parked, then woken once.
    for (const run of queued) expect(runs.get(run.id)).toBe(2);
  });

  it('cancel ends a sleeping run at once', async () => {
    const queued = await env.client.enqueue({ graph: 'sleeper', input: { ms: 3_600_000 } });
    await parkedOn(queued.id);
    const cancelled = await env.client.cancel(queued.id);
    expect(cancelled.status).toBe('cancelled');
  });

  async function parkedOn(runId: string): Promise<void> {
    await eventually(async () =>
      (await env.client.store.eventLog.events(runId)).some((event) => event.type === 'step-parked'),
    );
  }
});
