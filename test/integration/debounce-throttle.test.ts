import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { parseScheduleSpec } from '../../shared/operations/schedules/schedule-schema.js';
import { maxInAnyWindow } from '../helpers/max-in-any-window.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** One node that notes when each run started and with which input. */
function flowGraph(starts: { runId: string; input: unknown; at: number }[]) {
  return defineGraph({
    name: 'flow',
    input: undefined,
    state: { input: channel.replace<unknown>(null) },
    initialState: (input: unknown) => ({ input }),
    output: (state) => state.input,
  })
    .node('note', (state, context) => {
      starts.push({ runId: context.runId, input: state.input, at: Date.now() });
      return {};
    })
    .edge(START, 'note')
    .edge('note', END)
    .build();
}

describe('debounce and throttle per key', () => {
  const starts: { runId: string; input: unknown; at: number }[] = [];
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [flowGraph(starts)] });
  });
  afterAll(() => env.close());

  const startsOf = (ids: Set<string>) => starts.filter((start) => ids.has(start.runId));

  it('trailing: 100 rapid requests on one key start one run, with the last input', async () => {
    const debounce = { key: 'user-1', delayMs: 1500 };
    const records = [];
    for (let n = 0; n < 100; n += 1) records.push(await env.client.enqueue({ graph: 'flow', input: { n }, debounce }));
    const ids = new Set(records.map((record) => record.id));
    expect(ids.size).toBe(1);
    const [runId] = ids;
    const done = await env.client.wait(runId!, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ n: 99 });
    // Another key is its own window; and after the window closed, the same key starts a new run.
    const other = await env.client.enqueue({
      graph: 'flow',
      input: { n: 'other' },
      debounce: { ...debounce, key: 'u2' },
    });
    const next = await env.client.enqueue({ graph: 'flow', input: { n: 'next' }, debounce });
    expect(new Set([other.id, next.id, runId]).size).toBe(3);
    await Promise.all([other.id, next.id].map((id) => env.client.wait(id, { timeoutMs: 30_000 })));
    expect(startsOf(new Set([runId!, other.id, next.id]))).toHaveLength(3);
  });

  it('trailing with maxDelayMs: a key joined without pause still starts by the cap', async () => {
    const debounce = { key: 'busy', delayMs: 800, maxDelayMs: 2000 };
    const ids = new Set<string>();
    // Requests keep coming for longer than the cap: the first run must start and a second take over.
    const until = Date.now() + 6000;
    let n = 0;
    while (Date.now() < until && ids.size < 2) {
      ids.add((await env.client.enqueue({ graph: 'flow', input: { n: (n += 1) }, debounce })).id);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(ids.size).toBeGreaterThanOrEqual(2);
    const first = await env.client.wait([...ids][0]!, { timeoutMs: 30_000 });
    expect(first.status).toBe('completed');
  });

  it('leading: the first request starts at once, later ones within the window return it and start nothing', async () => {
    const debounce = { key: 'lead', delayMs: 5000, mode: 'leading' as const };
    const first = await env.client.enqueue({ graph: 'flow', input: { n: 1 }, debounce });
    const later = await Promise.all(
      [2, 3, 4].map((n) => env.client.enqueue({ graph: 'flow', input: { n }, debounce })),
    );
    expect(later.map((record) => record.id)).toEqual([first.id, first.id, first.id]);
    const done = await env.client.wait(first.id, { timeoutMs: 30_000 });
    expect(done.output).toEqual({ n: 1 });
  });

  it('throttle: at most `limit` runs of a key start in any period; the rest wait without failing', async () => {
    const throttle = { key: 'tenant-api', limit: 2, periodMs: 1000 };
    const records = await Promise.all(
      Array.from({ length: 8 }, (_, n) => env.client.enqueue({ graph: 'flow', input: { n }, throttle })),
    );
    const done = await Promise.all(records.map((record) => env.client.wait(record.id, { timeoutMs: 30_000 })));
    expect(done.every((run) => run.status === 'completed')).toBe(true);
    // The starts the throttle gave (Redis's clock) keep the limit in any period ...
    const { redis, keys } = env.worker.store;
    const given = (
      await redis.zrange(keys.flowKey('default', 'throttle', throttle.key), '0', '-1', 'WITHSCORES')
    ).filter((_, index) => index % 2 === 1);
    expect(given).toHaveLength(8);
    expect(maxInAnyWindow(given.map(Number), throttle.periodMs)).toBe(throttle.limit);
    // ... and no run started before its start (a delayed job never runs early; one clock, whole ms).
    const startOf = new Map(startsOf(new Set(records.map((record) => record.id))).map((s) => [s.runId, s.at]));
    const scheduled = await redis.zrange(keys.flowKey('default', 'throttle', throttle.key), '0', '-1', 'WITHSCORES');
    for (let index = 0; index < scheduled.length; index += 2)
      expect(startOf.get(scheduled[index]!)).toBeGreaterThanOrEqual(Number(scheduled[index + 1]) - 1);
  });

  it('refuses debounce with throttle on one run, naming both', async () => {
    await expect(
      env.client.enqueue({
        graph: 'flow',
        input: {},
        debounce: { key: 'a', delayMs: 10 },
        throttle: { key: 'a', limit: 1, periodMs: 10 },
      }),
    ).rejects.toThrow(/debounce and throttle/);
  });

  it("a schedule's spec carries a throttle or a debounce to each tick's run, not both", () => {
    const throttle = { key: 'nightly', limit: 1, periodMs: 60_000 };
    expect(parseScheduleSpec({ graph: 'flow', input: {}, everyMs: 1000, throttle }).throttle).toEqual(throttle);
    expect(() =>
      parseScheduleSpec({ graph: 'flow', input: {}, everyMs: 1000, throttle, debounce: { key: 'n', delayMs: 5 } }),
    ).toThrow(/debounce and throttle/);
  });

  it('a raw job with a debounce goes through the same gate', async () => {
    const intake = new Queue(INTAKE_QUEUE, {
      connection: { url: env.config.redisUrl!, maxRetriesPerRequest: null },
      prefix: env.config.queuePrefix,
    });
    try {
      const debounce = { key: 'raw', delayMs: 1500 };
      for (let n = 0; n < 5; n += 1)
        await intake.add('run', { v: 1, graph: 'flow', input: { n }, debounce, runId: `raw-${n}` });
      const run = await eventually(async () => starts.find((start) => start.runId.startsWith('raw-')), 30_000);
      // The intake takes jobs in parallel, so "the last" is the last one it took: any joiner's input.
      expect([1, 2, 3, 4]).toContain((run.input as { n: number }).n);
      const runs = await Promise.all([0, 1, 2, 3, 4].map((n) => env.client.get(`raw-${n}`)));
      expect(runs.filter((found) => found !== null).map((found) => found!.id)).toEqual([run.runId]);
      expect((await env.client.wait(run.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    } finally {
      await intake.close();
    }
  });
});
