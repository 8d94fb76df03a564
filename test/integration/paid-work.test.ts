import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const paid = new Map<string, number>();
const parked = new Set<string>();

/** A node that "pays" for a call (memoised), then fails once after saving it; and one rate-limited node. */
const paidGraph = defineGraph({ name: 'paid', state: { answer: channel.replace('') }, output: (state) => state.answer })
  .node(
    'call',
    async (_state, context) => {
      let fresh = false;
      const response = await context.memo('model', async () => {
        fresh = true;
        paid.set(context.runId, (paid.get(context.runId) ?? 0) + 1);
        return { text: 'forty-two', inputTokens: 100, outputTokens: 20 };
      });
      expect(fresh).toBe(context.attempt === 1);
      context.recordUsage({ inputTokens: response.inputTokens, outputTokens: response.outputTokens, costUsd: 0.001 });
      if (context.attempt === 1)
        throw new AgentqError('INTERNAL', 'crashed after the response was saved', { retryable: true });
      return { answer: response.text };
    },
    { retry: { maxAttempts: 3, initialDelayMs: 50 } },
  )
  .node('limited', (_state, context) => {
    if (!parked.has(context.runId)) {
      parked.add(context.runId);
      throw new AgentqError('RATE_LIMITED', 'provider said 429', { retryable: true, retryAfterMs: 400 });
    }
    context.recordUsage({ inputTokens: 10, outputTokens: 5, costUsd: 0 });
    return {};
  })
  .edge(START, 'call')
  .edge('call', 'limited')
  .edge('limited', END)
  .build();

describe('paid work: memo, usage, budget, Retry-After', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [paidGraph] });
  });
  afterAll(async () => env.close());

  it('a re-run step with a saved response does not pay again; usage counts each paid call once', async () => {
    const queued = await env.client.enqueue({ graph: 'paid', input: null });
    const done = await env.client.wait(queued.id);
    expect(done).toMatchObject({ status: 'completed', output: 'forty-two' });
    expect(paid.get(queued.id)).toBe(1);
    // Nothing was read from a prompt cache: the uncached cost is the cost.
    expect(done.usage).toEqual({ inputTokens: 110, outputTokens: 25, costUsd: 0.001, uncachedCostUsd: 0.001 });
    const steps = await env.client.steps(queued.id);
    expect(steps.map((step) => [step.node, step.attempts, step.usage ?? null])).toEqual([
      ['call', 2, { inputTokens: 100, outputTokens: 20, costUsd: 0.001, uncachedCostUsd: 0.001 }],
      ['limited', 1, { inputTokens: 10, outputTokens: 5, costUsd: 0 }],
    ]);
    // The memo of a committed step is gone: it can never run again.
    expect(await env.client.store.redis.hlen(env.client.store.keys.run(queued.id).memo)).toBe(0);
  });

  it('Retry-After parks the step without spending an attempt', async () => {
    const queued = await env.client.enqueue({ graph: 'paid', input: null });
    await env.client.wait(queued.id);
    const events = [];
    for await (const event of env.client.events(queued.id)) events.push(event);
    const starts = events.filter((event) => event.type === 'step-start' && event.data.node === 'limited');
    expect(starts.map((event) => event.data.attempt)).toEqual([1, 1]);
    expect(Number(starts[1]!.id.split('-')[0]) - Number(starts[0]!.id.split('-')[0])).toBeGreaterThanOrEqual(400);
    expect(events.find((event) => event.type === 'step-retry' && event.data.node === 'limited')?.data.parkedMs).toBe(
      400,
    );
  });

  it('a token budget stops the run before the step that would exceed it, with its context kept', async () => {
    const queued = await env.client.enqueue({ graph: 'paid', input: null, options: { tokenBudget: 120 } });
    const done = await env.client.wait(queued.id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'BUDGET_EXCEEDED', node: 'limited' } });
    expect(done.usage.inputTokens + done.usage.outputTokens).toBe(120);
    expect(await env.client.store.reads.state(queued.id)).toEqual({ answer: 'forty-two' });
  });
});
