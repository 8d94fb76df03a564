import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunStatus } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `asker`: one node that asks for input, and outputs the answer. */
const asker = defineGraph({
  name: 'asker',
  input: undefined,
  state: { answer: channel.replace<unknown>(null) },
  output: (state) => state.answer,
})
  .node('ask', (_state, context) => ({ answer: context.interrupt({ question: 'go on?' }) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

describe('a cancel that comes while a node is asking for input', () => {
  let env: TestEnv;
  /** Runs to cancel in the gap between their node's `interrupt()` and the script that records it. */
  const cancelInGap = new Set<string>();
  /** What the cancel request answered there. */
  const requested = new Map<string, RunStatus>();
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [asker] });
    // The gap made deterministic: the worker's record of the interrupt waits for the cancel to land first.
    const lifecycle = env.worker.store.lifecycle;
    const record = lifecycle.interrupt.bind(lifecycle);
    lifecycle.interrupt = async (runId, ...rest) => {
      if (cancelInGap.has(runId)) requested.set(runId, (await env.client.cancel(runId)).status);
      return record(runId, ...rest);
    };
  });
  afterAll(async () => env.close());

  it('ends the run cancelled, not left cancelling, when the cancel lands after interrupt() was called', async () => {
    const queued = await env.client.enqueue({ graph: 'asker', input: {} });
    cancelInGap.add(queued.id);
    const ended = await env.client.wait(queued.id, { timeoutMs: 15_000 });
    // The cancel found the step running (so a worker is to end the run), and the run did end.
    expect(requested.get(queued.id)).toBe('cancelling');
    expect(ended.status).toBe('cancelled');
    expect(ended.error?.code).toBe('CANCELLED');
    expect(ended.interrupt).toBeNull();
  });

  it('a run nobody cancels still waits on its interrupt', async () => {
    const queued = await env.client.enqueue({ graph: 'asker', input: {} });
    const waiting = await env.client.wait(queued.id, { timeoutMs: 15_000 });
    expect(waiting.status).toBe('waiting');
    expect(waiting.interrupt?.request).toEqual({ question: 'go on?' });
  });
});
