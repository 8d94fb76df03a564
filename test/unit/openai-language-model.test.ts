import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StepAbort } from '../../shared/contracts/abort.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { OpenAILanguageModel } from '../../shared/adapters/openai/openai-language-model.js';
import { retryAfterOf } from '../../shared/adapters/openai/openai-error.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';

/** The adapter over the real openai SDK, against the scripted server over HTTP. */
describe('OpenAILanguageModel', () => {
  let server: ScriptedOpenAIServer;
  let model: OpenAILanguageModel;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    // A generous timeout: on a loaded machine the first request (the SDK warming up) took over 400 ms.
    // The hang test has a model of its own with a short one.
    model = new OpenAILanguageModel({ model: 'scripted-chat', baseURL: server.url, apiKey: 'k', timeoutMs: 10_000 });
  });
  afterAll(async () => server.close());
  beforeEach(() => server.reset());

  const request: LanguageModelRequest = { messages: [{ role: 'user', content: 'hi' }] };
  const failure = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(AgentqError.isInstance(error)).toBe(true);
    return error as AgentqError;
  };

  it("streams by default: text deltas reach onTextDelta as they come, the response is the whole message with the last chunk's usage", async () => {
    server.setScript([
      {
        content: 'The answer is 42.',
        toolCalls: [{ id: 'c9', name: 'calc', arguments: { x: 1 } }],
        usage: { prompt_tokens: 9, completion_tokens: 4 },
      },
    ]);
    const deltas: string[] = [];
    const response = await model.generate({ ...request, onTextDelta: (text) => deltas.push(text) });
    expect(deltas).toEqual(['The ', 'answer ', 'is ', '42.']);
    expect(response.message).toEqual({
      role: 'assistant',
      content: 'The answer is 42.',
      tool_calls: [{ id: 'c9', type: 'function', function: { name: 'calc', arguments: '{"x":1}' } }],
    });
    expect(response).toMatchObject({
      usage: { inputTokens: 9, outputTokens: 4 },
      finishReason: 'tool_calls',
      model: 'scripted-chat',
      responseId: 'chatcmpl-scripted-0',
    });
    expect(server.chatRequests()[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('a stream that breaks off mid-answer is a retryable PROVIDER_ERROR', async () => {
    server.setScript([{ content: 'one two three four', failAfterChunks: 2 }]);
    const deltas: string[] = [];
    const error = await failure(model.generate({ ...request, onTextDelta: (text) => deltas.push(text) }));
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    expect(deltas).toEqual(['one ', 'two ']);
  });

  it('stream: false asks for one JSON answer', async () => {
    server.setScript([{ content: 'whole' }]);
    const plain = new OpenAILanguageModel({ model: 'scripted-chat', baseURL: server.url, stream: false });
    expect(
      (await plain.generate({ ...request, onTextDelta: () => expect.fail('no deltas without streaming') })).message
        .content,
    ).toBe('whole');
    expect(server.chatRequests()[0]?.body).not.toHaveProperty('stream');
  });

  it('sends messages, tools, max_tokens, temperature and response_format in the chat-completions shape', async () => {
    server.setScript([{ content: '{"a":1}', usage: { prompt_tokens: 11, completion_tokens: 3 } }]);
    const response = await model.generate({
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'r' },
      ],
      tools: [{ name: 'f', description: 'does f', parameters: { type: 'object', properties: {} } }],
      maxTokens: 50,
      temperature: 0.2,
      responseFormat: { type: 'json_object' },
    });
    expect(response).toEqual({
      message: { role: 'assistant', content: '{"a":1}' },
      usage: { inputTokens: 11, outputTokens: 3 },
      finishReason: 'stop',
      model: 'scripted-chat',
      responseId: 'chatcmpl-scripted-0',
    });
    const body = server.chatRequests()[0]!.body;
    expect(body).toMatchObject({
      model: 'scripted-chat',
      max_tokens: 50,
      temperature: 0.2,
      response_format: { type: 'json_object' },
      tools: [
        {
          type: 'function',
          function: { name: 'f', description: 'does f', parameters: { type: 'object', properties: {} } },
        },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'r' },
    ]);
  });

  it('returns tool calls with finish reason tool_calls', async () => {
    server.setScript([{ toolCalls: [{ id: 'x', name: 'calculator', arguments: { expression: '1+1' } }] }]);
    const response = await model.generate(request);
    expect(response.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'x', type: 'function', function: { name: 'calculator', arguments: '{"expression":"1+1"}' } }],
    });
    expect(response.finishReason).toBe('tool_calls');
  });

  it('sends max_completion_tokens when told to', async () => {
    server.setScript([{ content: 'ok' }]);
    const reasoning = new OpenAILanguageModel({
      model: 'o3-mini',
      baseURL: server.url,
      maxTokensParameter: 'max_completion_tokens',
    });
    await reasoning.generate({ ...request, maxTokens: 9 });
    expect(server.chatRequests()[0]!.body).toMatchObject({ max_completion_tokens: 9 });
    expect(server.chatRequests()[0]!.body).not.toHaveProperty('max_tokens');
  });

  it('makes exactly one request per call: the SDK never retries on its own', async () => {
    server.setScript([{ status: 500 }, { content: 'never reached' }]);
    await failure(model.generate(request));
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('maps 429 with Retry-After to RATE_LIMITED with retryAfterMs; retry-after-ms wins', async () => {
    server.setScript([
      { status: 429, retryAfter: 2 },
      { status: 429, retryAfter: 9, headers: { 'retry-after-ms': '1500' } },
    ]);
    const first = await failure(model.generate(request));
    expect(first).toMatchObject({
      code: 'RATE_LIMITED',
      retryable: true,
      retryAfterMs: 2000,
      details: { status: 429, code: 'rate_limit_exceeded' },
    });
    expect((await failure(model.generate(request))).retryAfterMs).toBe(1500);
  });

  it('maps 429 without Retry-After to a retryable error without retryAfterMs, and insufficient_quota to a final one', async () => {
    server.setScript([
      { status: 429 },
      { status: 429, code: 'insufficient_quota', message: 'You exceeded your current quota' },
    ]);
    const plain = await failure(model.generate(request));
    expect(plain).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(plain.retryAfterMs).toBeUndefined();
    expect(await failure(model.generate(request))).toMatchObject({
      code: 'PROVIDER_ERROR',
      retryable: false,
      message: expect.stringMatching(/You exceeded your current quota/),
    });
  });

  it.each([500, 502, 503, 408, 409])('maps HTTP %i to a retryable PROVIDER_ERROR', async (status) => {
    server.setScript([{ status }]);
    expect(await failure(model.generate(request))).toMatchObject({
      code: 'PROVIDER_ERROR',
      retryable: true,
      details: { status },
    });
  });

  it('maps other 4xx to a final PROVIDER_ERROR with the provider message and code', async () => {
    server.setScript([
      { status: 400, code: 'context_length_exceeded' },
      { status: 401, message: 'Incorrect API key provided' },
      { status: 404, message: 'model not found' },
    ]);
    const tooLong = await failure(model.generate(request));
    expect(tooLong).toMatchObject({
      code: 'PROVIDER_ERROR',
      retryable: false,
      details: { status: 400, code: 'context_length_exceeded', param: 'messages' },
    });
    expect(tooLong.message).toMatch(
      /^the model provider rejected the request \(HTTP 400\): This model's maximum context length is 8192 tokens/,
    );
    expect((await failure(model.generate(request))).message).toMatch(
      /Incorrect API key provided \(check OPENAI_API_KEY\)/,
    );
    expect((await failure(model.generate(request))).message).toMatch(
      /model not found \(check LLM_MODEL 'scripted-chat'/,
    );
  });

  it('maps a hang to a retryable TIMEOUT after timeoutMs', async () => {
    server.setScript([{ hang: true }]);
    const impatient = new OpenAILanguageModel({
      model: 'scripted-chat',
      baseURL: server.url,
      apiKey: 'k',
      timeoutMs: 400,
    });
    const startedAt = Date.now();
    const error = await failure(impatient.generate(request));
    expect(error).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(390);
    await expect.poll(() => server.requests[0]?.outcome).toBe('aborted');
  });

  it("rethrows the step's abort reason when the step's signal fires", async () => {
    server.setScript([{ hang: true }]);
    const controller = new AbortController();
    const pending = model.generate({ ...request, abortSignal: controller.signal }).catch((caught: unknown) => caught);
    await expect.poll(() => server.requests.length).toBe(1);
    const reason = new StepAbort('cancel', 'the run was cancelled');
    controller.abort(reason);
    expect(await pending).toBe(reason);
  });

  it('maps a refused connection to a retryable PROVIDER_ERROR whose message hides the address (its cause names it)', async () => {
    const port = await freePort();
    const nowhere = new OpenAILanguageModel({ model: 'm', baseURL: `http://127.0.0.1:${port}/v1` });
    const error = await failure(nowhere.generate(request));
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    expect(error.message).toMatch(/could not reach the model server \(ECONNREFUSED\)/);
    expect(JSON.stringify(error.toRecord())).not.toContain(String(port));
    // The operator's log prints the cause: the address is there.
    expect((error.cause as Error).message).toContain(`http://127.0.0.1:${port}/v1`);
  });

  it("keeps the model server's host, port and path out of a refusal's message and details", async () => {
    const http = await import('node:http');
    const internal = http.createServer((incoming, answer) => {
      const where = `http://${incoming.headers.host}${incoming.url}`;
      answer.writeHead(404, { 'content-type': 'text/plain' }).end(`no route ${where} on ${incoming.headers.host}`);
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
    const { port } = internal.address() as { port: number };
    const baseURL = `http://127.0.0.1:${port}/internal/llm/v1`;
    try {
      const error = await failure(new OpenAILanguageModel({ model: 'm', baseURL }).generate(request));
      expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
      const record = JSON.stringify(error.toRecord());
      expect(record).toContain('the model server');
      expect(record).not.toContain(String(port));
      expect(record).not.toContain('/internal/llm');
      expect((error.cause as Error).message).toContain(baseURL);
    } finally {
      await new Promise((resolve) => internal.close(resolve));
    }
  });

  it('parses Retry-After as seconds, as an HTTP date, and caps it', () => {
    expect(retryAfterOf(new Headers({ 'retry-after': '1.5' }), 60_000)).toBe(1500);
    expect(retryAfterOf(new Headers({ 'retry-after': '3600' }), 60_000)).toBe(60_000);
    const date = new Date(Date.now() + 5000).toUTCString();
    expect(retryAfterOf(new Headers({ 'retry-after': date }), 60_000)).toBeGreaterThan(3000);
    expect(retryAfterOf(new Headers({ 'retry-after': 'soon' }), 60_000)).toBeUndefined();
    expect(retryAfterOf(undefined, 60_000)).toBeUndefined();
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('OpenAILanguageModel with servers that bend the format', () => {
  it('gives tool calls without ids, or with repeated ids, ids of their own', async () => {
    const server = await startScriptedOpenAIServer({
      script: [
        {
          toolCalls: [
            { id: '', name: 'a', arguments: {} },
            { id: 'same', name: 'b', arguments: {} },
            { id: 'same', name: 'c', arguments: {} },
          ],
        },
      ],
    });
    try {
      const response = await new OpenAILanguageModel({ model: 'm', baseURL: server.url }).generate({
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(response.message.tool_calls?.map((call) => call.id)).toEqual(['call_0', 'same', 'same_2']);
    } finally {
      await server.close();
    }
  });
});
