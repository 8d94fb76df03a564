import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { OpenAILanguageModel } from '../../shared/adapters/openai/openai-language-model.js';
import { loadConfig } from '../../shared/config/config.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { createProviderModes } from '../fakes/scripted-provider-modes.js';

/** The flex tier and the prompt cache through the real openai SDK and agentq's adapter, against the scripted server. */
describe('OpenAILanguageModel: the flex tier and the prompt cache', () => {
  let server: ScriptedOpenAIServer;
  let model: OpenAILanguageModel;
  let streamed: OpenAILanguageModel;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: () => ({ content: 'ok' }),
      flex: { refuseEvery: 3, extraDelayMs: 300 },
      promptCache: {},
    });
    // A default-tier request times out long before a flex one, whose answer comes 300 ms late.
    const options = { model: 'scripted-chat', baseURL: server.url, apiKey: 'k', timeoutMs: 100, flexTimeoutMs: 20_000 };
    model = new OpenAILanguageModel({ ...options, stream: false });
    streamed = new OpenAILanguageModel(options);
  });
  afterAll(async () => server.close());
  beforeEach(() => server.reset());

  const ask = (content: string, extra: Partial<LanguageModelRequest> = {}): LanguageModelRequest => ({
    messages: [{ role: 'user', content }],
    ...extra,
  });
  /** The AgentqError a call fails with (a call that succeeds fails the test). */
  const failure = (call: Promise<unknown>): Promise<AgentqError> =>
    call.then(
      () => Promise.reject(new Error('the call was expected to fail')),
      (caught: unknown) => (AgentqError.isInstance(caught) ? caught : Promise.reject(caught as Error)),
    );

  it('sends service_tier and prompt_cache_key, reads the tier that answered (whole and streamed)', async () => {
    for (const adapter of [model, streamed]) {
      server.reset();
      const response = await adapter.generate(ask('hi', { serviceTier: 'flex', promptCacheKey: 'k1' }));
      expect(server.chatRequests()[0]?.body).toMatchObject({ service_tier: 'flex', prompt_cache_key: 'k1' });
      expect(response.serviceTier).toBe('flex');
      expect(response.message.content).toBe('ok');
    }
  });

  it('gives a flex request the flex timeout: the answer a default request would time out on arrives', async () => {
    server.setScript(() => ({ content: 'late', delayMs: 300 }));
    const timedOut = await failure(model.generate(ask('slow')));
    expect(timedOut).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(timedOut.message).toContain('AGENTQ_LLM_TIMEOUT_MS');
    // The flex answer comes as late (the server's flex delay), within the flex timeout.
    server.setScript(() => ({ content: 'late' }));
    const flex = await model.generate(ask('slow', { serviceTier: 'flex' }));
    expect(flex.message.content).toBe('late');
  });

  it("maps the provider's flex capacity refusal to a retryable FLEX_UNAVAILABLE without a park; other 429s stay RATE_LIMITED", async () => {
    const flex = ask('q', { serviceTier: 'flex' });
    await model.generate(flex);
    await model.generate(flex);
    const refused = await failure(model.generate(flex));
    expect(refused).toMatchObject({ code: 'FLEX_UNAVAILABLE', retryable: true, details: { status: 429 } });
    expect(refused.retryAfterMs).toBeUndefined();
    // The third flex request was the refused one (every 3rd), and the next is answered.
    expect(server.chatRequests().map((request) => request.status)).toEqual([200, 200, 429]);
    expect((await model.generate(flex)).serviceTier).toBe('flex');

    server.setScript([
      { status: 429, retryAfter: 2 },
      { status: 429, code: 'resource_unavailable' },
    ]);
    expect(await failure(model.generate(flex))).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 2000 });
    // The same body to a default-tier request is the account's rate limit, not a tier's capacity.
    expect(await failure(model.generate(ask('q')))).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('reports the prefix a recent request shared as cached input tokens, per prompt cache key, in 128-token steps from 1024', async () => {
    const document = 'The filing says revenue grew. '.repeat(200); // ≈ 1,500 tokens
    const first = await model.generate(ask(`${document} Question one?`, { promptCacheKey: 'doc' }));
    const second = await model.generate(ask(`${document} Question two, longer?`, { promptCacheKey: 'doc' }));
    const otherKey = await model.generate(ask(`${document} Question three?`, { promptCacheKey: 'other' }));
    const short = await model.generate(ask('A short prompt.', { promptCacheKey: 'doc' }));
    const shortAgain = await model.generate(ask('A short prompt.', { promptCacheKey: 'doc' }));
    expect(first.usage?.cachedInputTokens).toBeUndefined();
    const cached = second.usage!.cachedInputTokens!;
    expect(cached % 128).toBe(0);
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(cached).toBeLessThanOrEqual(second.usage!.inputTokens);
    // The shared prefix is the document and ' Question ', about a token per 4 characters.
    expect(cached).toBe(Math.floor(Math.floor((document.length + ' Question '.length) / 4) / 128) * 128);
    expect(otherKey.usage?.cachedInputTokens).toBeUndefined();
    expect(short.usage?.cachedInputTokens).toBeUndefined();
    expect(shortAgain.usage?.cachedInputTokens).toBeUndefined();
  });

  it('the streamed answer carries cached tokens in its usage chunk', async () => {
    const document = 'Passage text repeated for the cache. '.repeat(150);
    await streamed.generate(ask(`${document} A?`));
    const again = await streamed.generate(ask(`${document} B?`));
    expect(again.usage?.cachedInputTokens).toBeGreaterThanOrEqual(1024);
  });

  it('says whether the provider offers flex: AGENTQ_FLEX auto is on for api.openai.com only', () => {
    const tiers = (baseURL: string, flex?: 'auto' | 'on' | 'off') =>
      new OpenAILanguageModel({ model: 'm', baseURL, ...(flex ? { flex } : {}) }).tiers;
    expect(tiers('https://api.openai.com/v1')).toEqual(['flex']);
    expect(tiers(server.url)).toEqual([]);
    expect(tiers(server.url, 'on')).toEqual(['flex']);
    expect(tiers('https://api.openai.com/v1', 'off')).toEqual([]);
    expect(loadConfig({}).llmFlex).toBe('auto');
    expect(loadConfig({ AGENTQ_FLEX_TIMEOUT_MS: '1000' }).llmFlexTimeoutMs).toBe(1000);
  });
});

describe('the scripted prompt cache', () => {
  it('forgets a prefix after its TTL', () => {
    let now = 0;
    const modes = createProviderModes(undefined, { ttlMs: 1000 }, () => now);
    const body = (question: string) =>
      ({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(8000) + question }] }) as never;
    const cachedOf = (question: string) =>
      (
        modes.mark({ usage: { prompt_tokens: 2100 } }, body(question)) as {
          usage: { prompt_tokens_details: { cached_tokens: number } };
        }
      ).usage.prompt_tokens_details.cached_tokens;
    expect(cachedOf('a')).toBe(0);
    now = 900;
    expect(cachedOf('b')).toBe(1920);
    now = 2500;
    expect(cachedOf('c')).toBe(0);
  });
});
