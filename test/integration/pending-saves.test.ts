import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { startCountedRedis, type CountedRedis } from '../helpers/counted-redis.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const paid = new Map<string, number>();

/** Two steps, each one paid call (memoised) whose node returns at once with the result. */
const twoCalls = defineGraph({ name: 'two-calls', state: { answer: channel.replace('') }, output: (s) => s.answer })
  .node('call', async (_state, context) => {
    const response = await context.memo(
      'model',
      async () => {
        paid.set(context.runId, (paid.get(context.runId) ?? 0) + 1);
        return { text: `answer of ${context.runId}` };
      },
      { request: { messages: [{ role: 'user', content: 'what?' }] } },
    );
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

/**
 * A paid result's save the node does not wait for (worker/engine/pending-saves.ts): the node goes on at once
 * and its step's commit is sent behind the save, so Redis must still run the save first — the result is in
 * the memo hash before the commit that drops it, for each step. Watched with MONITOR (redis-cli's) on a
 * redis-server of the file's own.
 */
describe("a paid result's save, not waited for by its node", () => {
  let redis: CountedRedis;
  let env: TestEnv;
  beforeAll(async () => {
    redis = await startCountedRedis();
    env = await startTestEnv({ env: { REDIS_URL: redis.url }, graphs: [twoCalls] });
  });
  afterAll(async () => {
    await env?.close();
    await redis?.stop();
  });

  it('lands before the commit that drops it, each step paid once, each call recorded', async () => {
    const monitor = spawn('redis-cli', ['-u', redis.url, 'monitor'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: monitor.stdout });
    // Writes to any memo hash, in the order Redis ran them, sorted out by run at the end.
    const writes: [command: string, key: string, field: string][] = [];
    let attached: () => void;
    const monitoring = new Promise<void>((resolve) => (attached = resolve));
    lines.on('line', (line) => {
      if (line === 'OK') attached();
      const write = /"(hset|hdel)" "([^"]*:memo)" "([^"]*)"/i.exec(line);
      if (write) writes.push([write[1]!.toLowerCase(), write[2]!, write[3]!]);
    });
    await monitoring;
    try {
      const queued = await env.client.enqueue({ graph: 'two-calls', input: null });
      const keys = env.client.store.keys.run(queued.id);
      const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
      expect(done).toMatchObject({ status: 'completed', output: `answer of ${queued.id} / second call` });
      expect(paid.get(queued.id)).toBe(1);
      const ofRun = () =>
        writes.filter(([, key]) => key === keys.memo).map(([command, , field]) => `${command} ${field}`);
      // The feed lags the commands a little: s1's commit drops its result last.
      await eventually(async () => ofRun().includes('hdel s1.t0'), 5000, "s1's commit in the feed");
      const order = ofRun().filter((write) => !write.includes('claim:'));
      expect(order).toEqual(['hset s0.t0', 'hdel s0.t0', 'hset s1.t0', 'hdel s1.t0']);
      expect(await redis.redis.hlen(keys.memo)).toBe(0);
      expect(await redis.redis.hkeys(keys.record)).toEqual(expect.arrayContaining(['k:s0.t0:model', 'k:s1.t0:model']));
    } finally {
      monitor.kill();
    }
  });
});
