import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `napper`: sleeps a moment (the run's waits hash then holds the sleep's end), then ends. */
const napper = defineGraph({
  name: 'napper',
  input: undefined,
  state: { slept: channel.replace(false) },
  output: (state) => state.slept,
})
  .node('nap', async (_state, context) => {
    await context.sleep(50);
    return { slept: true };
  })
  .edge(START, 'nap')
  .edge('nap', END)
  .build();

describe('purging a run that waited', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [napper] });
  });
  afterAll(async () => env.close());

  it('deletes its waits hash and its inbox with its other keys, not only by their expiry', async () => {
    const queued = await env.client.enqueue({ graph: 'napper', input: {} });
    // An event nobody waits for, sent while the run goes on: kept in the run's inbox for a wait to come.
    const sent = await env.client.sendEvent({ runId: queued.id, name: 'unawaited', data: {} });
    expect(sent.stored).toBe(true);
    expect((await env.client.wait(queued.id, { timeoutMs: 15_000 })).output).toBe(true);
    const { waits, inbox } = env.client.store.keys.runWaits(queued.id);
    const redis = env.client.store.redis;
    expect(await redis.exists(waits)).toBe(1);
    expect(await redis.exists(inbox)).toBe(1);
    await env.client.purge(queued.id);
    expect(await env.client.get(queued.id)).toBeNull();
    expect(await redis.exists(waits, inbox)).toBe(0);
  });
});
