import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** Three steps, each appending a message; the second and third read the history first (as a model step does). */
const talk = defineGraph({
  name: 'talk',
  state: { seen: channel.append<number>() },
  initialState: () => ({}),
})
  .node('ask', () => ({ messages: [{ role: 'user' as const, content: 'first' }] }))
  .node('answer', async (_state, context) => {
    const history = await context.history();
    return { seen: [history.length], messages: [{ role: 'assistant' as const, content: 'second' }] };
  })
  .node('again', async (_state, context) => {
    const history = await context.history();
    const tail = await context.history({ from: 1 });
    return {
      seen: [history.length, tail.length],
      messages: [{ role: 'user' as const, content: history.map((message) => message.content).join('+') }],
    };
  })
  .edge(START, 'ask')
  .edge('ask', 'answer')
  .edge('answer', 'again')
  .edge('again', END)
  .build();

/**
 * A step handed to the worker that committed the step before it (an eager hop) reads no history from
 * Redis: that worker holds it, as it holds the state (the run's first step taken in here saw an empty
 * one, and each of its commits appended its messages).
 */
describe('eager hops: no history read', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [talk] });
  });
  afterAll(async () => env.close());

  it("a run stepped by one worker reads its history from that worker's cache, the same messages as stored", async () => {
    const reads = vi.spyOn(env.worker.store.reads, 'messages');
    const run = await env.client.enqueue({ graph: 'talk', input: {} });
    const done = await env.client.wait(run.id, { timeoutMs: 20_000 });
    expect(done.status).toBe('completed');
    expect(reads.mock.calls.filter(([runId]) => runId === run.id)).toEqual([]);
    const state = (await env.client.store.reads.state(run.id)) as { seen: number[] };
    expect(state.seen).toEqual([1, 2, 1]);
    const stored = await env.client.store.reads.messages(run.id);
    expect(stored.map((message) => message.content)).toEqual(['first', 'second', 'first+second']);
    reads.mockRestore();
  });
});
