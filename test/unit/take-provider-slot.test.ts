import { describe, expect, it } from 'vitest';
import type { AcquireResult } from '../../shared/operations/limits/provider-rate-limiter.js';
import type { ProviderLimits } from '../../shared/llm/rate-limit-table.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import type { RequestRateLimiter } from '../../worker/agents/agent-services.js';
import { MockLanguageModel } from '../../testing/mock-language-model.js';
import { fakeNodeContext } from '../../testing/fake-node-context.js';

/** A limiter double: answers from a list and records what it was asked. */
class MockRateLimiter implements RequestRateLimiter {
  readonly acquired: { provider: string; model: string; limits: ProviderLimits; tokens: number }[] = [];
  readonly settled: { ticket: string; tokens: number }[] = [];
  constructor(private readonly answers: AcquireResult[]) {}
  async acquire(provider: string, model: string, limits: ProviderLimits, tokens: number): Promise<AcquireResult> {
    this.acquired.push({ provider, model, limits, tokens });
    return this.answers.shift() ?? { granted: true, ticket: 't' };
  }
  async settle(_provider: string, _model: string, ticket: string, tokens: number): Promise<void> {
    this.settled.push({ ticket, tokens });
  }
}

const messages = [{ role: 'user' as const, content: 'What is the capital of France?' }];
const settings = { rateLimits: { 'mock-model': { requestsPerMinute: 60, tokensPerMinute: 10_000 } }, maxTokens: 100 };

describe('callLanguageModel within provider limits', () => {
  it('takes a slot for prompt + max_tokens, settles it with the real usage; a memoised response takes none', async () => {
    const rateLimiter = new MockRateLimiter([{ granted: true, ticket: 'ticket-1' }]);
    const languageModel = new MockLanguageModel();
    const first = fakeNodeContext({ languageModel, rateLimiter, agentSettings: settings });
    await callLanguageModel(first.context, { messages });
    // 7 tokens of text + 4 per message + 3 reply priming, plus max_tokens.
    expect(rateLimiter.acquired).toEqual([
      {
        provider: 'mock',
        model: 'mock-model',
        limits: { requestsPerMinute: 60, tokensPerMinute: 10_000 },
        tokens: 114,
      },
    ]);
    expect(rateLimiter.settled).toEqual([{ ticket: 'ticket-1', tokens: 15 }]);

    const again = fakeNodeContext({ languageModel, rateLimiter, agentSettings: settings }, { memo: first.memo });
    await callLanguageModel(again.context, { messages });
    expect(rateLimiter.acquired).toHaveLength(1);
    expect(languageModel.calls).toHaveLength(1);
  });

  it('a full window parks the step: RATE_LIMITED, retryable, with retryAfterMs; nothing is sent or saved', async () => {
    const rateLimiter = new MockRateLimiter([{ granted: false, retryAfterMs: 1500 }]);
    const languageModel = new MockLanguageModel();
    const { context, memo } = fakeNodeContext({ languageModel, rateLimiter, agentSettings: settings });
    const error = await callLanguageModel(context, { messages }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect((error as { retryAfterMs: number }).retryAfterMs).toBeGreaterThanOrEqual(1500);
    expect((error as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(1750);
    expect(languageModel.calls).toHaveLength(0);
    expect(memo.size).toBe(0);
  });

  it('a request larger than the whole token limit fails instead of waiting forever', async () => {
    const rateLimiter = new MockRateLimiter([{ granted: false, retryAfterMs: 60_000, impossible: true }]);
    const { context } = fakeNodeContext({
      languageModel: new MockLanguageModel(),
      rateLimiter,
      agentSettings: settings,
    });
    await expect(callLanguageModel(context, { messages })).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      retryable: false,
      message: expect.stringMatching(/more than the 10000 tokens\/min AGENTQ_RATE_LIMITS allows/),
    });
  });

  it('models without limits never ask the limiter', async () => {
    const rateLimiter = new MockRateLimiter([]);
    const { context } = fakeNodeContext({
      languageModel: new MockLanguageModel({ modelId: 'other' }),
      rateLimiter,
      agentSettings: settings,
    });
    await callLanguageModel(context, { messages });
    expect(rateLimiter.acquired).toHaveLength(0);
  });
});
