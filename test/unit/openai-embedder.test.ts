import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { embedTexts } from '../../worker/agents/llm/embed-texts.js';
import { limitsFor, parseRateLimits } from '../../shared/llm/rate-limit-table.js';
import { OpenAIEmbedder } from '../../shared/adapters/openai/openai-embedder.js';
import { rankLexically } from '../../worker/agents/graphs/expert-recall.js';
import { embedText, startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { fakeNodeContext } from '../../testing/fake-node-context.js';

/** The Embedder adapter over the real openai SDK and HTTP, against the scripted server's deterministic embeddings. */
describe('OpenAIEmbedder', () => {
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ embeddingDimensions: 32 });
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  const texts = ['redis persistence', 'job queues and retries', 'french cooking', '', 'pastry'];

  it('embeds in batches, in order, and discovers the dimensions', async () => {
    const embedder = new OpenAIEmbedder({ model: 'scripted-embedding', baseURL: server.url, batchSize: 2 });
    expect(embedder.dimensions).toBeUndefined();
    const result = await embedder.embed(texts);
    expect(result.dimensions).toBe(32);
    expect(embedder.dimensions).toBe(32);
    expect(result.model).toBe('scripted-embedding');
    expect(result.vectors).toHaveLength(5);
    expect(result.vectors[1]).toEqual(embedText('job queues and retries', 32));
    expect(result.vectors[3]).toEqual(embedText(' ', 32));
    const requests = server.embeddingRequests();
    expect(requests.map((request) => (request.body as { input: string[] }).input.length)).toEqual([2, 2, 1]);
    // Floats asked for explicitly (servers that ignore base64 would otherwise decode to []).
    expect((requests[0]!.body as { encoding_format: string }).encoding_format).toBe('float');
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(await embedder.embed([])).toEqual({
      vectors: [],
      usage: { inputTokens: 0 },
      model: 'scripted-embedding',
      dimensions: 32,
    });
  });

  it('maps errors like model calls: 429 with Retry-After parks, 400 fails, 500 retries', async () => {
    const faulty = await startScriptedOpenAIServer({
      embeddingsScript: [{ status: 429, retryAfter: 3 }, { status: 400, message: 'bad input' }, { status: 503 }],
    });
    try {
      const embedder = new OpenAIEmbedder({ model: 'scripted-embedding', baseURL: faulty.url });
      await expect(embedder.embed(['a'])).rejects.toMatchObject({
        code: 'RATE_LIMITED',
        retryable: true,
        retryAfterMs: 3000,
      });
      await expect(embedder.embed(['a'])).rejects.toMatchObject({
        code: 'PROVIDER_ERROR',
        retryable: false,
        message: expect.stringMatching(/HTTP 400\): bad input/),
      });
      await expect(embedder.embed(['a'])).rejects.toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    } finally {
      await faulty.close();
    }
  });

  it('refuses a model whose vector length changes behind the same name', async () => {
    const other = await startScriptedOpenAIServer({ embeddingDimensions: 16 });
    try {
      // The first request reaches the 32-dimension server, later ones a 16-dimension one (a model swapped behind one name).
      let requests = 0;
      const client = new OpenAI({
        baseURL: server.url,
        apiKey: 'unused',
        maxRetries: 0,
        fetch: (url, init) => fetch(requests++ === 0 ? url : String(url).replace(server.url, other.url), init),
      });
      const embedder = new OpenAIEmbedder({ model: 'scripted-embedding', client });
      expect((await embedder.embed(['a'])).dimensions).toBe(32);
      const error = await embedder.embed(['b']).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentqError);
      expect((error as AgentqError).message).toMatch(/answered a vector of 16 dimensions after answering 32/);
    } finally {
      await other.close();
    }
  });

  it('embedTexts memoises the vectors and records usage with the input price', async () => {
    const embedder = new OpenAIEmbedder({ model: 'scripted-embedding', baseURL: server.url });
    const services = {
      embedder,
      agentSettings: { prices: { 'scripted-embedding': { inputPerMillion: 0.02, outputPerMillion: 0 } } },
    };
    const first = fakeNodeContext(services);
    const call = await embedTexts(first.context, embedder, ['alpha beta', 'gamma']);
    expect(call).toMatchObject({ fresh: true, dimensions: 32 });
    expect(first.recorded[0]).toMatchObject({ outputTokens: 0, model: 'scripted-embedding' });
    expect(first.recorded[0]!.costUsd).toBeCloseTo((first.recorded[0]!.inputTokens * 0.02) / 1e6, 12);
    const again = fakeNodeContext(services, { memo: first.memo });
    expect(await embedTexts(again.context, embedder, ['alpha beta', 'gamma'])).toMatchObject({
      fresh: false,
      vectors: call.vectors,
    });
    expect(server.embeddingRequests()).toHaveLength(1);
  });
});

describe('provider limit table (AGENTQ_RATE_LIMITS)', () => {
  it('parses entries, model ids with ":", and a * default; 0 means unlimited', () => {
    const { table, problems } = parseRateLimits('gpt-4o-mini:500:200000, llama3.2:3b:60:0, *:30:10000, free:0:0');
    expect(problems).toEqual([]);
    expect(limitsFor(table, 'gpt-4o-mini-2024-07-18')).toEqual({ requestsPerMinute: 500, tokensPerMinute: 200_000 });
    expect(limitsFor(table, 'llama3.2:3b')).toEqual({ requestsPerMinute: 60, tokensPerMinute: 0 });
    expect(limitsFor(table, 'anything')).toEqual({ requestsPerMinute: 30, tokensPerMinute: 10_000 });
    expect(limitsFor(table, 'free')).toBeUndefined();
    expect(limitsFor({}, 'anything')).toBeUndefined();
    expect(parseRateLimits('gpt-4o:fast:1').problems[0]).toMatch(
      /must be <model>:<requests per minute>:<tokens per minute>/,
    );
  });
});

describe('lexical expert recall', () => {
  it('ranks by shared rare words, deterministically', () => {
    const experts = [
      'redis: Redis persistence, AOF and snapshots',
      'queues: job queues, retries and idempotency',
      'chef: French cooking and pastry',
    ];
    expect(rankLexically('How do retries work in job queues?', experts, 2).map((hit) => hit.index)).toEqual([1, 0]);
    expect(rankLexically('AOF persistence', experts, 1)[0]).toMatchObject({ index: 0 });
    // No shared word: input order.
    expect(rankLexically('zebra', experts, 3).map((hit) => hit.index)).toEqual([0, 1, 2]);
  });
});
