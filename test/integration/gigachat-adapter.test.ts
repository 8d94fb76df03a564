import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { GigaChatLanguageModel } from '../../shared/adapters/gigachat/gigachat-language-model.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { startScriptedGigaChatServer, type ScriptedGigaChatServer } from '../fakes/scripted-gigachat-server.js';

/** The GigaChat adapter over real HTTP against a scripted GigaChat server: OAuth, functions, streaming, refusals. */
describe('GigaChat adapter', () => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const now = () => clock;
  let server: ScriptedGigaChatServer;
  beforeAll(async () => {
    server = await startScriptedGigaChatServer({ now });
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  const model = (options: { stream?: boolean } = {}) =>
    new GigaChatLanguageModel({
      model: 'GigaChat-2-Max',
      authKey: server.authKey,
      authUrl: server.authUrl,
      baseURL: server.baseUrl,
      now,
      ...options,
    });
  const user = (text: string): Message[] => [{ role: 'user', content: text }];

  it('fetches a token once, reuses it, and renews it before it expires: the API never refuses one', async () => {
    const gigachat = model();
    server.setScript([{ content: 'one' }, { content: 'two' }, { content: 'three' }]);
    await gigachat.generate({ messages: user('a') });
    clock += 28 * 60_000;
    await gigachat.generate({ messages: user('b') });
    expect(server.oauthRequests()).toHaveLength(1);
    // 29.5 minutes after issue: within the minute's margin, so a new token comes before the call.
    clock += 90_000;
    const third = await gigachat.generate({ messages: user('c') });
    expect(third.message.content).toBe('three');
    expect(server.oauthRequests()).toHaveLength(2);
    expect(server.refusedTokens()).toBe(0);
    const oauth = server.oauthRequests()[0]!;
    expect(oauth.headers.authorization).toBe(`Basic ${server.authKey}`);
    expect(oauth.body).toEqual({ scope: 'GIGACHAT_API_PERS' });
    expect(server.chatRequests().map((request) => request.headers.authorization)).toEqual([
      'Bearer scripted-token-1',
      'Bearer scripted-token-1',
      'Bearer scripted-token-2',
    ]);
  });

  it('a refused token is renewed once and the request sent again; a second refusal fails with a readable error', async () => {
    const gigachat = model();
    server.setScript([{ content: 'before' }, { content: 'after' }]);
    await gigachat.generate({ messages: user('a') });
    server.revokeTokens();
    const answer = await gigachat.generate({ messages: user('b') });
    expect(answer.message.content).toBe('after');
    expect(server.oauthRequests()).toHaveLength(2);
    expect(server.refusedTokens()).toBe(1);

    // A server that refuses every token: one renewal, then the refusal is the step's error.
    const refusing = await startScriptedGigaChatServer({ now, tokenTtlMs: -1 });
    try {
      const doomed = new GigaChatLanguageModel({
        model: 'GigaChat',
        authKey: refusing.authKey,
        authUrl: refusing.authUrl,
        baseURL: refusing.baseUrl,
      });
      const error = await doomed.generate({ messages: user('x') }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentqError);
      expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
      expect((error as Error).message).toMatch(/HTTP 401.*Token has expired/);
      expect(refusing.oauthRequests()).toHaveLength(2);
      expect(refusing.chatRequests()).toHaveLength(2);
    } finally {
      await refusing.close();
    }
  });

  it('a step aborted while the shared token is fetched stops waiting; the fetch goes on for the others', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const http = {
      fetch: async (url: string, init: RequestInit) => {
        if (url === server.authUrl) await gate;
        return fetch(url, init);
      },
    };
    const gigachat = new GigaChatLanguageModel({
      model: 'GigaChat',
      authKey: server.authKey,
      authUrl: server.authUrl,
      baseURL: server.baseUrl,
      http,
    });
    server.setScript([{ content: 'other' }]);
    const controller = new AbortController();
    const aborted = gigachat
      .generate({ messages: user('a'), abortSignal: controller.signal })
      .catch((caught: unknown) => caught);
    const other = gigachat.generate({ messages: user('b') });
    controller.abort(new AgentqError('CANCELLED', 'the run was cancelled'));
    expect(await aborted).toMatchObject({ code: 'CANCELLED', message: 'the run was cancelled' });
    release();
    expect((await other).message.content).toBe('other');
    expect(server.oauthRequests()).toHaveLength(1);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('a wrong authorization key fails without retrying, naming the setting', async () => {
    const gigachat = new GigaChatLanguageModel({
      model: 'GigaChat',
      authKey: 'd3Jvbmc6a2V5',
      authUrl: server.authUrl,
      baseURL: server.baseUrl,
    });
    const error = await gigachat.generate({ messages: user('x') }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
    expect((error as Error).message).toMatch(/OAuth endpoint rejected the request \(HTTP 401\).*GIGACHAT_AUTH_KEY/);
    expect((error as Error).message).not.toContain('127.0.0.1');
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('offers tools as functions with few_shot_examples; a function_call becomes the tool call, its state id sent back', async () => {
    const weather = defineTool({
      name: 'weather',
      description: 'Current weather in a city',
      input: z.object({ city: z.string() }),
      examples: [{ request: 'What is the weather in Kazan?', params: { city: 'Kazan' } }],
      execute: () => 'sunny',
    });
    for (const stream of [false, true]) {
      server.reset();
      const gigachat = model({ stream });
      server.setScript([
        { functionCall: { name: 'weather', arguments: { city: 'Paris' } }, stateId: `state-${stream}` },
        { content: 'Sunny in Paris.' },
      ]);
      const deltas: string[] = [];
      const first = await gigachat.generate({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris?' },
        ],
        tools: [weather.describe()],
        onToolCallDelta: (delta) => deltas.push(`${delta.name}:${delta.arguments}`),
      });
      expect(first.finishReason).toBe('tool_calls');
      expect(first.message).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: `gigachat-state-state-${stream}`,
            type: 'function',
            function: { name: 'weather', arguments: '{"city":"Paris"}' },
          },
        ],
      });
      if (stream) expect(deltas).toEqual(['weather:{"city":"Paris"}']);
      const sent = server.chatRequests()[0]!.body;
      expect(sent).toMatchObject({ model: 'GigaChat-2-Max', function_call: 'auto', stream });
      expect(sent.functions).toEqual([
        {
          name: 'weather',
          description: 'Current weather in a city',
          parameters: weather.parameters,
          few_shot_examples: [{ request: 'What is the weather in Kazan?', params: { city: 'Kazan' } }],
        },
      ]);

      const second = await gigachat.generate({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris?' },
          first.message,
          { role: 'tool', tool_call_id: first.message.tool_calls![0]!.id, content: 'sunny' },
        ],
        tools: [weather.describe()],
      });
      expect(second.message.content).toBe('Sunny in Paris.');
      expect(server.chatRequests()[1]!.body.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: '',
          function_call: { name: 'weather', arguments: { city: 'Paris' } },
          functions_state_id: `state-${stream}`,
        },
        { role: 'function', name: 'weather', content: '{"result":"sunny"}' },
      ]);
    }
  });

  it('streams text as deltas and returns the same answer with usage', async () => {
    const gigachat = model({ stream: true });
    server.setScript([
      { content: 'Moscow is the capital of Russia.', usage: { prompt_tokens: 7, completion_tokens: 9 } },
    ]);
    const pieces: string[] = [];
    const answer = await gigachat.generate({ messages: user('capital?'), onTextDelta: (text) => pieces.push(text) });
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe('Moscow is the capital of Russia.');
    expect(answer).toMatchObject({
      message: { role: 'assistant', content: 'Moscow is the capital of Russia.' },
      finishReason: 'stop',
      usage: { inputTokens: 7, outputTokens: 9 },
      model: 'GigaChat-2-Max:2.0.28.2',
    });
    expect(server.chatRequests()[0]!.headers.accept).toBe('text/event-stream');
  });

  it('blacklist is a refusal, length is length, 429 and 5xx are retryable with their codes', async () => {
    const gigachat = model({ stream: false });
    server.setScript([
      { content: 'Не люблю менять тему разговора, но вот сейчас тот самый случай.', finishReason: 'blacklist' },
      { content: 'half an ans', finishReason: 'length' },
      { status: 429, message: 'Too Many Requests', retryAfter: 3 },
      { status: 503, message: 'Service Unavailable' },
      { status: 404, message: 'No such model' },
    ]);
    const refused = await gigachat.generate({ messages: user('?') });
    expect(refused).toMatchObject({
      finishReason: 'refusal',
      refusal: 'Не люблю менять тему разговора, но вот сейчас тот самый случай.',
      message: { content: null },
    });
    expect((await gigachat.generate({ messages: user('?') })).finishReason).toBe('length');
    const limited = await gigachat.generate({ messages: user('?') }).catch((caught: unknown) => caught);
    expect(limited).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfterMs: 3000 });
    const failed = await gigachat.generate({ messages: user('?') }).catch((caught: unknown) => caught);
    expect(failed).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    const missing = await gigachat.generate({ messages: user('?') }).catch((caught: unknown) => caught);
    expect(missing).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
    expect((missing as Error).message).toMatch(/No such model.*LLM_MODEL 'GigaChat-2-Max'/);
  });
});
