import { describe, expect, it } from 'vitest';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { Keys } from '../../shared/store/keys.js';
import type { ChatRequestTransformer } from '../../worker/agents/llm/chat-request-transformer.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

/** Every request on the flex tier, as a batch's plan sends them (here through the worker's transformer). */
const onFlex: ChatRequestTransformer = (request) => ({ ...request, serviceTier: 'flex' });

/**
 * The flex tier through a real worker, the real openai SDK and the scripted server: the provider's flex refusal
 * fails the attempt with FLEX_UNAVAILABLE, retried with backoff (not parked) and answered on the next attempt;
 * the answer is priced at flex prices.
 */
describe('flex-tier model calls in runs', () => {
  const { server, env } = useAgentE2E({
    env: {
      OPENAI_API_KEY: 'test-key',
      AGENTQ_PRICES: 'scripted-chat:2:8',
      AGENTQ_FLEX_PRICES: 'scripted-chat:1:3',
      // Limits make the tenant's spend counted: it is counted at flex prices too.
      AGENTQ_TENANT_BUDGET_DEFAULTS: '{"tokensPerDay":1000000}',
    },
    services: { chatRequestTransformer: onFlex },
    // The first flex request is refused for capacity; the second is answered, on the flex tier.
    server: { flex: { refuse: (flexIndex) => flexIndex === 0 } },
  });

  it('a refused flex call is retried and answered; its usage is priced at AGENTQ_FLEX_PRICES', async () => {
    server.setScript(() => ({ content: 'Paris.', usage: { prompt_tokens: 1000, completion_tokens: 100 } }));
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'Capital of France?', tools: [] },
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Paris.' } });
    const requests = server.chatRequests();
    expect(
      requests.map((request) => [request.status, (request.body as { service_tier?: string }).service_tier]),
    ).toEqual([
      [429, 'flex'],
      [200, 'flex'],
    ]);
    const [step] = await env.client.steps(done.id);
    expect(step).toMatchObject({ node: 'model', attempts: 2 });
    // 1000 × 1 + 100 × 3 per million at flex prices (live would be 1000 × 2 + 100 × 8).
    expect(step!.usage).toMatchObject({ inputTokens: 1000, outputTokens: 100, costUsd: expect.closeTo(0.0013, 12) });
    expect(done.usage.costUsd).toBeCloseTo(0.0013, 12);
    const spend = await new TenantBudget(env.client.store.redis, new Keys(env.config.keyPrefix)).usage('default', {
      days: 1,
    });
    expect(spend.days[0]).toMatchObject({ tokens: 1100, calls: 1, costUsd: expect.closeTo(0.0013, 12) });
    const retried = (await env.client.store.eventLog.events(done.id)).find((event) => event.type === 'step-retry');
    expect(retried?.data).toMatchObject({ error: { code: 'FLEX_UNAVAILABLE' } });
  });
});
