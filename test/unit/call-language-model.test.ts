import { trace } from '@opentelemetry/api';
import { describe, expect, it, vi } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { MockLanguageModel } from '../../testing/mock-language-model.js';
import { fakeNodeContext as fakeContext } from '../../testing/fake-node-context.js';

const messages = [{ role: 'user' as const, content: 'What is the capital of France?' }];

describe('callLanguageModel', () => {
  it('saves the response before returning it; a repeated step reuses it and records its usage again', async () => {
    const languageModel = new MockLanguageModel({
      modelId: 'gpt-4o-mini',
      generate: {
        message: { role: 'assistant', content: 'Paris' },
        usage: { inputTokens: 1_000_000, outputTokens: 0 },
        finishReason: 'stop',
        model: 'gpt-4o-mini-2024-07-18',
      },
    });
    const services = {
      languageModel,
      agentSettings: { prices: { 'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 } } },
    };
    const first = fakeContext(services);
    const call = await callLanguageModel(first.context, { messages });
    expect(call).toMatchObject({ fresh: true, usageEstimated: false, costUsd: 0.15, message: { content: 'Paris' } });
    expect(first.recorded).toEqual([
      {
        inputTokens: 1_000_000,
        outputTokens: 0,
        costUsd: 0.15,
        uncachedCostUsd: 0.15,
        model: 'gpt-4o-mini-2024-07-18',
        finishReason: 'stop',
      },
    ]);

    const again = fakeContext(services, { memo: first.memo });
    const reused = await callLanguageModel(again.context, { messages });
    expect(reused).toMatchObject({ fresh: false, message: { content: 'Paris' } });
    expect(languageModel.calls).toHaveLength(1);
    expect(again.recorded).toEqual(first.recorded);
  });

  it('makes no span with tracing off (no exporter configured): no tracer is asked, the usage is the same', async () => {
    const getTracer = vi.spyOn(trace, 'getTracer');
    try {
      const languageModel = new MockLanguageModel();
      const { context } = fakeContext({ languageModel });
      const call = await callLanguageModel(context, { messages });
      expect(call).toMatchObject({ fresh: true, usageEstimated: false });
      expect(getTracer).not.toHaveBeenCalled();
    } finally {
      getTracer.mockRestore();
    }
  });

  it('passes the step signal and the configured max tokens', async () => {
    const languageModel = new MockLanguageModel();
    const { context } = fakeContext({ languageModel, agentSettings: { maxTokens: 64 } });
    await callLanguageModel(context, { messages, temperature: 0 });
    expect(languageModel.calls[0]).toMatchObject({
      messages,
      maxTokens: 64,
      temperature: 0,
      abortSignal: context.abortSignal,
    });
  });

  it('estimates usage with the tokenizer when the provider sends none', async () => {
    const languageModel = new MockLanguageModel({
      generate: {
        message: { role: 'assistant', content: 'The capital of France is Paris.' },
        usage: undefined,
        finishReason: 'stop',
        model: 'local',
      },
    });
    const { context, recorded } = fakeContext({ languageModel });
    const call = await callLanguageModel(context, { messages });
    expect(call.usageEstimated).toBe(true);
    // o200k_base: 7 tokens of text + 4 per message + 3 reply priming; the answer is 7.
    expect(call.usage).toEqual({ inputTokens: 14, outputTokens: 7 });
    expect(recorded[0]).toMatchObject({ inputTokens: 14, outputTokens: 7, costUsd: 0 });
  });

  it('refuses (BUDGET_EXCEEDED, not retryable) before calling when the budget cannot cover prompt + max tokens', async () => {
    const languageModel = new MockLanguageModel();
    const tight = fakeContext({ languageModel, agentSettings: { maxTokens: 100 } }, { tokenBudgetRemaining: 110 });
    const error = await callLanguageModel(tight.context, { messages }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentqError);
    expect(error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      retryable: false,
      details: { estimatedTokens: 114, remainingTokens: 110 },
    });
    expect(languageModel.calls).toHaveLength(0);
    expect(tight.memo.size).toBe(0);

    const enough = fakeContext({ languageModel, agentSettings: { maxTokens: 100 } }, { tokenBudgetRemaining: 114 });
    await callLanguageModel(enough.context, { messages });
    expect(languageModel.calls).toHaveLength(1);
  });

  it('fails with a configuration message when no model is configured', async () => {
    const { context } = fakeContext({});
    await expect(callLanguageModel(context, { messages })).rejects.toMatchObject({
      code: 'PROVIDER_ERROR',
      retryable: false,
      message: expect.stringMatching(/set LLM_MODEL/),
    });
  });

  it('does not save a failed call, so the retry asks again', async () => {
    const languageModel = new MockLanguageModel({
      generate: [new AgentqError('PROVIDER_ERROR', 'HTTP 500', { retryable: true }), 'second time lucky'],
    });
    const { context, memo } = fakeContext({ languageModel });
    await expect(callLanguageModel(context, { messages })).rejects.toThrow('HTTP 500');
    expect(memo.size).toBe(0);
    expect((await callLanguageModel(context, { messages })).message.content).toBe('second time lucky');
  });

  it('prices cached input tokens at the cached rate and a flex answer at flex prices, the uncached cost beside', async () => {
    const answer = (serviceTier?: string) =>
      new MockLanguageModel({
        modelId: 'm',
        generate: {
          message: { role: 'assistant', content: 'Paris' },
          usage: { inputTokens: 1_000_000, cachedInputTokens: 800_000, outputTokens: 0 },
          finishReason: 'stop',
          model: 'm',
          ...(serviceTier ? { serviceTier } : {}),
        },
      });
    // Live: 200k at 2 + 800k at 0.5 per million; flex: half (AGENTQ_FLEX_PRICES has no entry for m).
    const agentSettings = { prices: { m: { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 } } };
    const live = fakeContext({ languageModel: answer(), agentSettings });
    expect(await callLanguageModel(live.context, { messages })).toMatchObject({ costUsd: 0.8, uncachedCostUsd: 2 });
    expect(live.recorded[0]).toMatchObject({ cachedInputTokens: 800_000, costUsd: 0.8, uncachedCostUsd: 2 });
    // Asked for flex and answered on it; asked for flex but served at the default tier: live prices.
    const flex = fakeContext({ languageModel: answer('flex'), agentSettings });
    await callLanguageModel(flex.context, { messages, serviceTier: 'flex' });
    expect(flex.recorded[0]).toMatchObject({ costUsd: 0.4, uncachedCostUsd: 1 });
    const served = fakeContext({ languageModel: answer('default'), agentSettings });
    await callLanguageModel(served.context, { messages, serviceTier: 'flex' });
    expect(served.recorded[0]).toMatchObject({ costUsd: 0.8, uncachedCostUsd: 2 });
  });

  it('derives a prompt cache key from the model, the system prompt and the tools, sent but not recorded', async () => {
    const languageModel = new MockLanguageModel();
    const tools = [{ name: 'search', description: 'Search', parameters: { type: 'object', properties: {} } }];
    const asked: unknown[] = [];
    const ask = async (question: string, system = 'You answer from passages.') => {
      const { context } = fakeContext({ languageModel });
      const memo = context.memo.bind(context);
      // What time travel records of the call (the memo's options) is kept apart from what was sent.
      context.memo = (key, compute, options) => (asked.push(options), memo(key, compute, options));
      await callLanguageModel(context, {
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: question },
        ],
        tools,
      });
      return { key: languageModel.calls.at(-1)!.promptCacheKey };
    };
    const one = await ask('Who built it?');
    const two = await ask('When was it built?');
    const other = await ask('Who built it?', 'You are terse.');
    expect(one.key).toMatch(/^agentq-[\w-]{16}$/);
    expect(two.key).toBe(one.key);
    expect(other.key).not.toBe(one.key);
    expect(asked).toHaveLength(3);
    expect(JSON.stringify(asked)).toContain('Who built it?');
    expect(JSON.stringify(asked)).not.toContain('promptCacheKey');
    // No system prompt and no tools: nothing long is shared, no key.
    await callLanguageModel(fakeContext({ languageModel }).context, { messages });
    expect(languageModel.calls.at(-1)!.promptCacheKey).toBeUndefined();
    // A key the caller names is kept.
    await callLanguageModel(fakeContext({ languageModel }).context, { messages, promptCacheKey: 'mine' });
    expect(languageModel.calls.at(-1)!.promptCacheKey).toBe('mine');
  });
});
