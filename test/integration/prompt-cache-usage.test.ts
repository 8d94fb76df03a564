import { describe, expect, it } from 'vitest';
import type { ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useParisRagEnv } from '../helpers/rag-fixtures.js';
import { describeRun } from '../../producer/cli/command-helpers.js';

/**
 * The provider's prompt cache end to end: rag-agent's requests share a byte-identical prefix and a prompt cache
 * key, the scripted server reports the shared prefix as cached tokens, and the run's usage counts them priced at
 * the cached rate beside the uncached cost (client → queue → worker → real openai SDK → scripted server).
 */
describe('prompt cache: shared prefixes, cached tokens in step and run usage', () => {
  const rag = useParisRagEnv('agentq-cache-', {
    // rag-agent's system prompt and tools are some 700 tokens: a lower floor than OpenAI's 1024 lets them count.
    model: { promptCache: { minTokens: 128 } },
    env: { AGENTQ_PRICES: 'scripted-chat:2:8:0.5' },
  });
  const server = rag.server;

  /** Search once, then answer citing the first passage shown. */
  const script = (request: ScriptedChatRequest) => {
    const tool = request.body.messages.findLast((message) => message.role === 'tool');
    if (!tool) return { toolCalls: [{ name: 'search', arguments: { query: 'Eiffel Tower' } }] };
    const id = /^\[([0-9a-f]{6})\]/m.exec(String(tool.content))?.[1] ?? 'none00';
    return { toolCalls: [{ name: 'final_answer', arguments: { answer: `It is in Paris [${id}].`, citations: [id] } }] };
  };
  const ask = async (query: string) => {
    const queued = await rag.env.client.enqueue({ graph: 'rag-agent', input: { query, collection: 'paris' } });
    return rag.env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it("two questions' first requests share every byte before the question, and one prompt cache key", async () => {
    server.setScript(script);
    await ask('Who designed the Eiffel Tower?');
    const firstOfOne = server.chatRequests()[0]!.body;
    server.reset();
    server.setScript(script);
    await ask('When was the tower finished, and how tall is it?');
    const firstOfTwo = server.chatRequests()[0]!.body;
    // The provider caches in this order: the tools, then the messages; the question is the last message.
    const prefix = (body: typeof firstOfOne) => JSON.stringify([body.tools, body.messages.slice(0, -1)]);
    expect(prefix(firstOfTwo)).toBe(prefix(firstOfOne));
    expect(firstOfOne.messages.at(-1)).toEqual({ role: 'user', content: 'Who designed the Eiffel Tower?' });
    expect(firstOfOne.messages.map((message) => message.role)).toEqual(['system', 'user']);
    const key = (firstOfOne as { prompt_cache_key?: string }).prompt_cache_key;
    expect(key).toMatch(/^agentq-/);
    expect((firstOfTwo as { prompt_cache_key?: string }).prompt_cache_key).toBe(key);
  });

  it('counts the cached tokens the provider reports on the step and the run, at the cached rate, the uncached cost beside', async () => {
    server.setScript(script);
    const done = await ask('Who designed the Eiffel Tower?');
    const answered = server.chatRequests().map((request) => request.index);
    expect(answered.length).toBe(2);
    const steps = (await rag.env.client.steps(done.id)).filter((step) => step.node === 'model');
    // The second call repeats the first's prompt and adds to it: its shared prefix is read from the cache.
    const cached = steps[1]!.usage!.cachedInputTokens!;
    expect(cached).toBeGreaterThanOrEqual(128);
    expect(cached % 128).toBe(0);
    expect(steps[0]!.usage!.cachedInputTokens).toBeUndefined();
    const input = done.usage.inputTokens;
    const output = done.usage.outputTokens;
    expect(done.usage.cachedInputTokens).toBe(cached);
    // (input − cached) × 2 + cached × 0.5 + output × 8 per million; uncached: every input token at 2.
    expect(done.usage.costUsd).toBeCloseTo(((input - cached) * 2 + cached * 0.5 + output * 8) / 1e6, 12);
    expect(done.usage.uncachedCostUsd).toBeCloseTo((input * 2 + output * 8) / 1e6, 12);
    expect(done.usage.uncachedCostUsd! - done.usage.costUsd).toBeCloseTo((cached * 1.5) / 1e6, 12);
    // `agentq status` shows them beside the run's tokens and cost.
    expect(describeRun(done)).toContain(
      `usage: ${input} input (${cached} cached) + ${output} output tokens; cost $${done.usage.costUsd.toFixed(6)} ($${done.usage.uncachedCostUsd!.toFixed(6)} uncached)`,
    );
  });
});
