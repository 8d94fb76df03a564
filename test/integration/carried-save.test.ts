import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { startCountedRedis, type CountedRedis } from '../helpers/counted-redis.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const paid = new Map<string, number>();

/** A paid call (memoised), then `after`: nothing (the node returns within the turn), or a wait on a timer. */
function paidGraph(name: string, after: () => Promise<void> | void) {
  return defineGraph({ name, state: { answer: channel.replace('') }, output: (state) => state.answer })
    .node('call', async (_state, context) => {
      const response = await context.memo(
        'model',
        async () => {
          paid.set(context.runId, (paid.get(context.runId) ?? 0) + 1);
          return { text: `answer of ${context.runId}` };
        },
        { request: { messages: [{ role: 'user', content: 'what?' }] } },
      );
      await after();
      return { answer: response.text };
    })
    .node('second', async (state, context) => {
      const again = await context.memo('model', async () => ({ text: 'second call' }));
      return { answer: `${state.answer} / ${again.text}` };
    })
    .edge(START, 'call')
    .edge('call', 'second')
    .edge('second', END)
    .build();
}

/**
 * A paid result's save carried by its step's commit (worker/engine/held-save.ts): a node that returns
 * within the turn its answer arrived in has the result's recording and the end of its claim written by
 * the commit's own script, and the result itself never written to the memo hash; a node that waits on
 * anything after its call has the result saved on its own before it resumes, as before. Watched with
 * Redis's MONITOR on a redis-server of the file's own.
 */
describe('a paid result carried by the commit', () => {
  let redis: CountedRedis;
  let env: TestEnv;
  beforeAll(async () => {
    redis = await startCountedRedis();
    env = await startTestEnv({
      env: { REDIS_URL: redis.url },
      graphs: [
        paidGraph('returns-at-once', () => undefined),
        paidGraph('waits-after-call', () => new Promise((resolve) => setTimeout(resolve, 50))),
      ],
    });
  });
  afterAll(async () => {
    await env?.close();
    await redis?.stop();
  });

  /** Runs `graph` once under MONITOR (redis-cli's); → the memo-hash fields HSET for the run, the run and its keys. */
  async function watchedRun(graph: string) {
    const monitor = spawn('redis-cli', ['-u', redis.url, 'monitor'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: monitor.stdout });
    // Every HSET of a memo hash, sorted out by run at the end (the worker may claim before enqueue's reply is read).
    const hsets: [key: string, field: string][] = [];
    let attached: () => void;
    const monitoring = new Promise<void>((resolve) => (attached = resolve));
    lines.on('line', (line) => {
      if (line === 'OK') attached();
      const hset = /"hset" "([^"]*:memo)" "([^"]*)"/i.exec(line);
      if (hset) hsets.push([hset[1]!, hset[2]!]);
    });
    await monitoring;
    try {
      const queued = await env.client.enqueue({ graph, input: null });
      const keys = env.client.store.keys.run(queued.id);
      const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
      // The feed lags the commands a little: the run's last claim is in it once the run has finished.
      await eventually(async () => hsets.filter(([key]) => key === keys.memo).length >= 2, 5000, 'the feed');
      const written = hsets.filter(([key]) => key === keys.memo).map(([, field]) => field);
      return { done, queued, written, keys };
    } finally {
      monitor.kill();
    }
  }

  it('a node that returns at once: no memo written, the call recorded, its claim ended, paid once', async () => {
    const { done, queued, written, keys } = await watchedRun('returns-at-once');
    expect(done).toMatchObject({ status: 'completed', output: `answer of ${queued.id} / second call` });
    expect(paid.get(queued.id)).toBe(1);
    // Each step's only writes to the memo hash were its claims: the results went with the commits.
    expect(written.filter((field) => !field.startsWith('claim:'))).toEqual([]);
    expect(written.filter((field) => field.startsWith('claim:'))).toEqual(['claim:s0.t0:model', 'claim:s1.t0:model']);
    expect(await redis.redis.hlen(keys.memo)).toBe(0);
    const recorded = await redis.redis.hkeys(keys.record);
    expect(recorded).toEqual(expect.arrayContaining(['k:s0.t0:model', 'k:s1.t0:model']));
  });

  it('a node that waits after its call: the result is saved on its own first, then dropped by the commit', async () => {
    const { done, queued, written, keys } = await watchedRun('waits-after-call');
    expect(done.status).toBe('completed');
    expect(paid.get(queued.id)).toBe(1);
    // s0's node waited on a timer after its call: its result was saved before it resumed; s1's was carried.
    expect(written.filter((field) => !field.startsWith('claim:'))).toEqual(['s0.t0']);
    expect(await redis.redis.hlen(keys.memo)).toBe(0);
    expect(await redis.redis.hkeys(keys.record)).toEqual(expect.arrayContaining(['k:s0.t0:model', 'k:s1.t0:model']));
  });
});
