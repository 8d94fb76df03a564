import OpenAI, { APIConnectionTimeoutError, BadRequestError, InternalServerError, RateLimitError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startScriptedOpenAIServer,
  type ScriptedOpenAIServer,
  type ScriptedOpenAIServerOptions,
} from '../fakes/scripted-openai-server.js';

const servers: ScriptedOpenAIServer[] = [];

async function start(
  options: ScriptedOpenAIServerOptions = {},
): Promise<{ server: ScriptedOpenAIServer; client: OpenAI }> {
  const server = await startScriptedOpenAIServer(options);
  servers.push(server);
  // maxRetries: 0 as in the product (docs/reference/errors.md): every scripted answer is seen exactly once.
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 }) };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const ask = (client: OpenAI, text = 'hello') =>
  client.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: text }] });

function cosine(left: readonly number[], right: readonly number[]): number {
  return left.reduce((sum, value, position) => sum + value * (right[position] ?? 0), 0);
}

describe('chat completions', () => {
  it('answers a plain message, echoing the model', async () => {
    const { client } = await start({ script: [{ content: 'Hi there' }] });
    const completion = await ask(client);
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('test-model');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hi there' });
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]?.finish_reason).toBe('stop');
  });

  it('answers tool calls with JSON-string arguments and finish_reason tool_calls', async () => {
    const { client } = await start({
      script: [
        {
          toolCalls: [
            { name: 'search', arguments: { query: 'queues' } },
            { id: 'mine', name: 'raw', arguments: '{"broken":' },
          ],
        },
      ],
    });
    const choice = (await ask(client)).choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([
      { id: 'call_0_0', type: 'function', function: { name: 'search', arguments: '{"query":"queues"}' } },
      { id: 'mine', type: 'function', function: { name: 'raw', arguments: '{"broken":' } },
    ]);
  });

  it('reports scripted usage, or a deterministic estimate', async () => {
    const { client } = await start({
      script: [{ content: 'x', usage: { prompt_tokens: 120, completion_tokens: 7 } }, { content: 'twelve chars' }],
    });
    expect((await ask(client)).usage).toEqual({ prompt_tokens: 120, completion_tokens: 7, total_tokens: 127 });
    // 'sixteen chars!!!' is 16 characters → 4 tokens; 'twelve chars' is 12 → 3.
    expect((await ask(client, 'sixteen chars!!!')).usage).toEqual({
      prompt_tokens: 4,
      completion_tokens: 3,
      total_tokens: 7,
    });
  });

  it('lets a script function answer from the request', async () => {
    const { client } = await start({
      script: (request, index) => ({ content: `#${index}: ${String(request.body.messages.at(-1)?.content)}` }),
    });
    expect((await ask(client, 'one')).choices[0]?.message.content).toBe('#0: one');
    expect((await ask(client, 'two')).choices[0]?.message.content).toBe('#1: two');
  });

  it('fails loudly when the script is exhausted, and push() extends it', async () => {
    const { server, client } = await start({ script: [{ content: 'only' }] });
    await ask(client);
    const error = await ask(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).message).toMatch(/script exhausted at request 2/);
    server.push({ content: 'more' });
    expect((await ask(client)).choices[0]?.message.content).toBe('more');
  });

  it('streams chunks over SSE (a word per chunk, tool calls in pieces, usage last) that the SDK reads back', async () => {
    const { server, client } = await start({
      script: [
        {
          content: 'one two three',
          toolCalls: [{ name: 'lookup', arguments: { q: 'x' } }],
          usage: { prompt_tokens: 5, completion_tokens: 7 },
        },
      ],
      streamChunkDelayMs: 5,
    });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let usage: unknown;
    let finish: string | null = null;
    const argumentsText: string[] = [];
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      for (const call of choice?.delta.tool_calls ?? [])
        if (call.function?.arguments) argumentsText.push(call.function.arguments);
      finish = choice?.finish_reason ?? finish;
    }
    expect(deltas).toEqual(['one ', 'two ', 'three']);
    expect(argumentsText.join('')).toBe('{"q":"x"}');
    expect(finish).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
    const [request] = server.chatRequests();
    expect(request?.chunkTimes).toHaveLength(3);
    expect(request?.outcome).toBe('answered');
  });

  it('a streamed answer can die mid-stream (failAfterChunks)', async () => {
    const { client } = await start({ script: [{ content: 'a b c d', failAfterChunks: 2 }] });
    const stream = await client.chat.completions.create({ model: 'm', messages: [], stream: true });
    await expect(
      (async () => {
        for await (const _chunk of stream) void _chunk;
      })(),
    ).rejects.toThrow();
  });

  it('rejects bad bodies with OpenAI-shaped 400s', async () => {
    const { server, client } = await start({ script: [{ content: 'unused' }] });
    for (const body of ['not json', '{"messages": []}', '{"model": "m"}']) {
      const response = await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      const parsed = (await response.json()) as { error: { type: string; message: string } };
      expect(parsed.error.type).toBe('invalid_request_error');
    }
    // Rejected requests never consume the script.
    expect(server.chatRequests()).toHaveLength(0);
    expect((await ask(client)).choices[0]?.message.content).toBe('unused');
  });
});

describe('injected faults', () => {
  it('429 surfaces as RateLimitError with a readable Retry-After', async () => {
    const { client } = await start({ script: [{ status: 429, retryAfter: 7 }] });
    const error = await ask(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    const rateLimit = error as RateLimitError;
    expect(rateLimit.headers.get('retry-after')).toBe('7');
    expect(rateLimit.code).toBe('rate_limit_exceeded');
    expect(rateLimit.type).toBe('rate_limit_error');
  });

  it('500 surfaces as InternalServerError', async () => {
    const { client } = await start({ script: [{ status: 500 }] });
    await expect(ask(client)).rejects.toBeInstanceOf(InternalServerError);
  });

  it('400 context_length_exceeded surfaces as BadRequestError with the code', async () => {
    const { client } = await start({ script: [{ status: 400, code: 'context_length_exceeded' }] });
    const error = await ask(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).code).toBe('context_length_exceeded');
    expect((error as BadRequestError).message).toMatch(/maximum context length/);
  });

  it('a hang is cut by the SDK timeout, and the log records the abort', async () => {
    const { server, client } = await start({ script: [{ hang: true }, { content: 'after' }] });
    const startedAt = Date.now();
    await expect(client.chat.completions.create({ model: 'm', messages: [] }, { timeout: 300 })).rejects.toBeInstanceOf(
      APIConnectionTimeoutError,
    );
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    await expect.poll(() => server.requests[0]?.outcome).toBe('aborted');
    expect(server.requests[0]?.status).toBeUndefined();
    expect((await ask(client)).choices[0]?.message.content).toBe('after');
  });

  it('delays an answer by delayMs', async () => {
    const { client } = await start({ script: [{ content: 'slow', delayMs: 200 }] });
    const startedAt = Date.now();
    await ask(client);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(190);
  });

  it('close() ends hanging requests', async () => {
    const { server, client } = await start({ script: [{ hang: true }] });
    const pending = ask(client).catch((caught: unknown) => caught);
    await expect.poll(() => server.requests.length).toBe(1);
    await server.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('embeddings', () => {
  it('are deterministic, of the configured dimension, and similar texts score higher', async () => {
    const { client } = await start({ embeddingDimensions: 32 });
    // The SDK asks base64 by default and decodes little-endian float32.
    const response = await client.embeddings.create({
      model: 'embed',
      input: ['the redis queue retries jobs', 'redis queue jobs retry', 'a recipe for banana bread'],
    });
    const [first, similar, unrelated] = response.data.map((item) => item.embedding);
    expect(first).toHaveLength(32);
    expect(cosine(first!, first!)).toBeCloseTo(1, 5);
    expect(cosine(first!, similar!)).toBeGreaterThan(cosine(first!, unrelated!));
    expect(response.usage.prompt_tokens).toBeGreaterThan(0);

    const again = await client.embeddings.create({ model: 'embed', input: 'the redis queue retries jobs' });
    expect(again.data[0]?.embedding).toEqual(first);
    const asFloats = await client.embeddings.create({
      model: 'embed',
      input: 'the redis queue retries jobs',
      encoding_format: 'float',
    });
    expect(asFloats.data[0]?.embedding).toEqual(first);
  });

  it('honour the dimensions parameter and the embeddings fault script', async () => {
    const { client } = await start({ embeddingsScript: [{ status: 429, retryAfter: 1 }] });
    await expect(client.embeddings.create({ model: 'embed', input: 'x' })).rejects.toBeInstanceOf(RateLimitError);
    const response = await client.embeddings.create({ model: 'embed', input: 'x', dimensions: 8 });
    expect(response.data[0]?.embedding).toHaveLength(8);
  });

  it('answer plain floats to a raw request without encoding_format', async () => {
    const { server } = await start();
    const response = await fetch(`${server.url}/embeddings`, {
      method: 'POST',
      body: JSON.stringify({ model: 'embed', input: 'plain floats' }),
    });
    const body = (await response.json()) as {
      data: { embedding: unknown }[];
      usage: { prompt_tokens: number; total_tokens: number };
    };
    expect(Array.isArray(body.data[0]?.embedding)).toBe(true);
    expect(body.data[0]?.embedding).toHaveLength(64);
    expect(body.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });
});

describe('request log and models', () => {
  it('records every request in order with body, headers and status', async () => {
    const { server, client } = await start({
      script: [{ content: 'a' }, { status: 500 }],
      models: ['chat-a', 'embed-b'],
    });
    await ask(client, 'first');
    await ask(client, 'second').catch(() => undefined);
    await client.embeddings.create({ model: 'embed', input: 'e' });
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['chat-a', 'embed-b']);

    expect(
      server.requests.map((record) => [record.index, record.method, record.path, record.status, record.outcome]),
    ).toEqual([
      [0, 'POST', '/v1/chat/completions', 200, 'answered'],
      [1, 'POST', '/v1/chat/completions', 500, 'answered'],
      [2, 'POST', '/v1/embeddings', 200, 'answered'],
      [3, 'GET', '/v1/models', 200, 'answered'],
    ]);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer test');
    expect(server.chatRequests().map((record) => record.body.messages[0]?.content)).toEqual(['first', 'second']);
    const first = server.requests[0]!;
    expect(first.answeredAt! >= first.receivedAt).toBe(true);

    server.reset();
    expect(server.requests).toHaveLength(0);
    expect((await ask(client)).choices[0]?.message.content).toBe('a');
  });
});
