import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { ConcurrencyKeys } from '../../shared/store/slots/concurrency-keys.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * Counts, per key, the runs between their first step's start and their last step's end — a run in
 * flight across its two steps, as a worker sees it — and the most of them at once.
 */
class InFlight {
  private readonly now = new Map<string, number>();
  readonly max = new Map<string, number>();
  readonly order: string[] = [];

  enter(key: string, runId: string): void {
    const count = (this.now.get(key) ?? 0) + 1;
    this.now.set(key, count);
    this.max.set(key, Math.max(this.max.get(key) ?? 0, count));
    this.order.push(runId);
  }

  leave(key: string): void {
    this.now.set(key, (this.now.get(key) ?? 1) - 1);
  }
}

/** Two steps with a pause between: a run holds its key's slot from the first to the end of the second. */
function keyedGraph(name: string, flight: InFlight, derive?: { limit: number }) {
  return defineGraph({
    name,
    input: undefined,
    state: { user: channel.replace<string>('') },
    initialState: (input: unknown) => ({ user: String((input as { user: string }).user) }),
    ...(derive
      ? { concurrency: { key: (input: unknown) => (input as { user: string }).user, limit: derive.limit } }
      : {}),
  })
    .node('begin', async (state, context) => {
      flight.enter(state.user, context.runId);
      await new Promise((resolve) => setTimeout(resolve, 60));
      return {};
    })
    .node('end', async (state) => {
      await new Promise((resolve) => setTimeout(resolve, 60));
      flight.leave(state.user);
      return {};
    })
    .edge(START, 'begin')
    .edge('begin', 'end')
    .edge('end', END)
    .build();
}

describe('concurrency keys', () => {
  const flight = new InFlight();
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({
      graphs: [keyedGraph('keyed', flight), keyedGraph('per-user', flight, { limit: 1 })],
      // More step slots than any key's limit: only the keys hold the runs back.
      env: { AGENTQ_WORKER_CONCURRENCY: '16' },
    });
  });
  afterAll(() => env.close());

  it('holds each key to its limit, runs the waiting ones in order, and lets keys without a slot free not wait', async () => {
    const runs = [];
    for (let n = 0; n < 12; n += 1)
      runs.push(
        await env.client.enqueue({ graph: 'keyed', input: { user: 'a' }, concurrency: { key: 'a', limit: 2 } }),
      );
    for (let n = 0; n < 4; n += 1)
      runs.push(
        await env.client.enqueue({ graph: 'keyed', input: { user: 'b' }, concurrency: { key: 'b', limit: 3 } }),
      );
    const done = await Promise.all(runs.map((run) => env.client.wait(run.id, { timeoutMs: 60_000 })));
    expect(done.map((run) => run.status)).toEqual(runs.map(() => 'completed'));
    // Without the keys the worker's 16 slots would take all 12 of `a` in at once.
    expect(flight.max.get('a')).toBe(2);
    expect(flight.max.get('b')).toBeLessThanOrEqual(3);
    expect(flight.max.get('b')).toBeGreaterThan(1);
    // The waiting runs of a key start in the order they were created.
    const ofA = runs.slice(0, 12).map((run) => run.id);
    expect(flight.order.filter((id) => ofA.includes(id))).toEqual(ofA);
    // Every slot was handed back: the key's line is empty.
    const keys = new ConcurrencyKeys(env.client.store.redis, env.client.store.keys, 60);
    expect(await keys.list('default', 'a')).toEqual([]);
  });

  it('a waiting run holds no worker, says why it waits, and a cancelled one leaves its place', async () => {
    const concurrency = { key: 'c', limit: 1 };
    const first = await env.client.enqueue({ graph: 'keyed', input: { user: 'c' }, concurrency });
    const second = await env.client.enqueue({ graph: 'keyed', input: { user: 'c' }, concurrency });
    const third = await env.client.enqueue({ graph: 'keyed', input: { user: 'c' }, concurrency });
    await eventually(
      async () => (await env.client.store.eventLog.events(second.id)).some((event) => event.type === 'step-deferred'),
      15_000,
      'the second run to say it waits for its key',
    );
    const deferred = (await env.client.store.eventLog.events(second.id)).find(
      (event) => event.type === 'step-deferred',
    );
    expect(JSON.stringify(deferred)).toContain('concurrency key c');
    await env.client.cancel(second.id);
    const [a, b, c] = await Promise.all(
      [first, second, third].map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })),
    );
    expect([a?.status, b?.status, c?.status]).toEqual(['completed', 'cancelled', 'completed']);
  });

  it("one key shared by two graphs, a graph's key derived from the input, and raw jobs: one limit", async () => {
    // `per-user` derives its key (limit 1) from the input; the `keyed` runs name the same key themselves.
    const ids: string[] = [];
    for (let n = 0; n < 4; n += 1) {
      ids.push((await env.client.enqueue({ graph: 'per-user', input: { user: 'd' } })).id);
      const concurrency = { key: 'd', limit: 1 };
      ids.push((await env.client.enqueue({ graph: 'keyed', input: { user: 'd' }, concurrency })).id);
    }
    const queue = new Queue(INTAKE_QUEUE, { connection: env.client.store.redis, prefix: env.config.queuePrefix });
    for (let n = 0; n < 3; n += 1) {
      const runId = `raw-d-${n}`;
      await queue.add('run', { v: 1, runId, graph: 'per-user', input: { user: 'd' } });
      ids.push(runId);
    }
    await queue.close();
    const done = await Promise.all(
      ids.map((id) =>
        eventually(async () => {
          const run = await env.client.get(id);
          return run && ['completed', 'failed', 'cancelled'].includes(run.status) ? run : undefined;
        }, 60_000),
      ),
    );
    expect(done.map((run) => run.status)).toEqual(ids.map(() => 'completed'));
    expect(flight.max.get('d')).toBe(1);
  });

  it("a bulk cancel by concurrency key takes that key's runs only", async () => {
    const of = async (key: string) => {
      const ids: string[] = [];
      for (let n = 0; n < 4; n += 1)
        ids.push(
          (await env.client.enqueue({ graph: 'keyed', input: { user: key }, concurrency: { key, limit: 1 } })).id,
        );
      return ids;
    };
    const [e, f] = [await of('e'), await of('f')];
    const summary = await env.client.cancelRuns({ status: ['queued', 'running'], concurrencyKey: 'e' }, {});
    expect(summary.runs.every((id) => e.includes(id))).toBe(true);
    const ends = await Promise.all([...e, ...f].map((id) => env.client.wait(id, { timeoutMs: 30_000 })));
    // The key's first run may have finished before the cancel reached it; those waiting behind it had not.
    expect(ends.slice(0, 4).filter((run) => run.status === 'cancelled').length).toBeGreaterThanOrEqual(3);
    expect(ends.slice(4).map((run) => run.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect((await env.client.get(f[0]!))?.concurrency).toEqual({ key: 'f', limit: 1 });
  });

  it('refuses a bad limit with a message naming the field', async () => {
    await expect(
      env.client.enqueue({ graph: 'keyed', input: { user: 'x' }, concurrency: { key: 'x', limit: 0 } }),
    ).rejects.toThrow(/concurrency\.limit must be a whole number from 1 to 10000/);
  });
});
