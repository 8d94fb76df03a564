import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../../shared/redis/create-redis.js';
import { startTelemetry, type Telemetry } from '../../shared/telemetry/telemetry.js';
import { parseCallId } from '../../worker/provider-batches/provider-batch-call.js';
import { APPLY_ANSWER } from '../../worker/provider-batches/provider-batch-scripts.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { answerAsProviderBatch } from '../helpers/answer-as-provider-batch.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

/**
 * The provider's Batch API at its edges: spans of provider batches and waits; an expired batch called live; a failed
 * one retried; the memo append.
 */
describe('provider batches: spans, fallback and failures', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    telemetry = await startTelemetry({ exporter });
    server = await startScriptedOpenAIServer({
      script: (request) => ({ content: `re: ${(request.body.messages as { content: string }[]).at(-1)?.content}` }),
      batchApi: { processingMs: 100 },
    });
    env = await startTestEnv({
      graphs: [twoTurnGraph()],
      telemetry,
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_PROVIDER_BATCH_POLL_MS: '100',
        AGENTQ_PROVIDER_BATCH_FALLBACK: 'live',
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
    await telemetry?.shutdown();
  });

  const answer = async (questions: string[]) => (await answerAsProviderBatch(env, questions)).batch;

  it('a span per provider batch, and a span per wait in its run trace', async () => {
    const before = server.batchApi!.batches.length;
    const batch = await answer(['span 1', 'span 2']);
    expect(batch.progress.completed).toBe(2);
    const providerBatchId = server.batchApi!.batches[before]!.id;
    const spans = () => exporter.getFinishedSpans();
    await eventually(async () => spans().some((span) => span.name === `provider_batch ${providerBatchId}`), 5000);
    const span = spans().find((candidate) => candidate.name === `provider_batch ${providerBatchId}`)!;
    expect(span.attributes).toMatchObject({
      'agentq.batch.id': batch.id,
      'agentq.provider_batch.id': providerBatchId,
      'agentq.provider_batch.status': 'completed',
      'agentq.provider_batch.requests': 2,
      'agentq.provider_batch.answered': 2,
      'gen_ai.request.model': 'scripted-chat',
    });
    const runId = `${batch.id}.i0`;
    await eventually(
      async () =>
        spans().some(
          (candidate) => candidate.name === 'agent.run two-turns' && candidate.attributes['agentq.run.id'] === runId,
        ),
      5000,
    );
    const root = spans().find(
      (candidate) => candidate.name === 'agent.run two-turns' && candidate.attributes['agentq.run.id'] === runId,
    )!;
    const waits = spans().filter(
      (candidate) => candidate.name === 'provider_batch.wait' && candidate.attributes['agentq.run.id'] === runId,
    );
    expect(waits.map((wait) => wait.attributes['agentq.step.id']).sort()).toEqual(['s0.t0', 's1.t0']);
    for (const wait of waits) expect(wait.spanContext().traceId).toBe(root.spanContext().traceId);
  });

  it('with AGENTQ_PROVIDER_BATCH_FALLBACK=live, the requests an expired provider batch left are called live', async () => {
    const before = server.batchApi!.batches.length;
    const liveBefore = server.chatRequests().length;
    server.batchApi!.configure({
      outcome: (_batch, index) => (index === before ? { status: 'expired', answered: 1 } : { status: 'completed' }),
    });
    try {
      const batch = await answer(['late 1', 'late 2', 'late 3']);
      expect(batch.progress).toMatchObject({ completed: 3, failed: 0 });
      // Two first turns expired: called live; then all three second turns in one provider batch.
      expect(server.chatRequests().length - liveBefore).toBe(2);
      expect(server.batchApi!.batches.slice(before).map((entry) => entry.lines.length)).toEqual([3, 3]);
    } finally {
      server.batchApi!.configure({ outcome: undefined });
    }
  });

  it('a failed provider batch fails its requests with its errors; the steps retry into a new one', async () => {
    const before = server.batchApi!.batches.length;
    server.batchApi!.configure({
      outcome: (_batch, index) =>
        index === before ? { status: 'failed', message: 'enqueued token limit reached' } : { status: 'completed' },
    });
    try {
      const batch = await answer(['failing 1', 'failing 2']);
      expect(batch.progress).toMatchObject({ completed: 2, failed: 0 });
      const created = server.batchApi!.batches.slice(before);
      expect(created[0]!.status).toBe('failed');
      expect(created[1]!.lines.map((line) => parseCallId(line.custom_id)?.attempt)).toEqual([2, 2]);
      const events = await env.client.store.eventLog.events(`${batch.id}.i0`);
      expect(events.find((event) => event.type === 'step-retry')?.data).toMatchObject({
        error: {
          code: 'PROVIDER_ERROR',
          message: expect.stringMatching(
            /provider batch batch_scripted_\d+ failed: invalid_request: line 1: enqueued token limit reached/,
          ),
        },
      });
    } finally {
      server.batchApi!.configure({ outcome: undefined });
    }
  });

  it("an answer joins the step's saved results as they are: nothing else of them is re-encoded", async () => {
    const runId = 'pb-memo-run';
    const keys = env.client.store.keys.run(runId);
    const redis = env.client.store.redis;
    await redis.hset(keys.meta, 'status', 'running', 'superstep', 2);
    const earlier = JSON.stringify({
      first: {
        message: { role: 'assistant', content: null, tool_calls: [] },
        usage: { inputTokens: 1, outputTokens: 2 },
      },
    });
    await redis.hset(keys.memo, 's2.t0', earlier);
    const value = JSON.stringify({ message: { role: 'assistant', content: 'é "quoted" /' }, list: [] });
    const apply = (key: string, superstep = 2) =>
      runScript<string>(redis, APPLY_ANSWER, [keys.memo, keys.meta, keys.writes], ['s2.t0', key, value, superstep, 0]);
    expect(await apply('second')).toBe('saved');
    expect(JSON.parse((await redis.hget(keys.memo, 's2.t0'))!)).toEqual({
      ...JSON.parse(earlier),
      second: JSON.parse(value),
    });
    expect(await apply('second')).toBe('present');
    expect(await apply('third', 1)).toBe('stale');
  });
});

describe('provider batches: the limits of one provider batch', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: () => ({ content: 'fine' }), batchApi: { processingMs: 50 } });
    env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_PROVIDER_BATCH_POLL_MS: '100',
        AGENTQ_PROVIDER_BATCH_MAX_REQUESTS: '2',
        AGENTQ_PROVIDER_BATCH_MAX_BYTES: '1024',
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  it('splits what is parked by AGENTQ_PROVIDER_BATCH_MAX_REQUESTS and _MAX_BYTES', async () => {
    const long = 'x'.repeat(700);
    const questions = ['short 1', 'short 2', 'short 3', 'short 4', 'short 5', `${long} 6`, `${long} 7`];
    const { batch: done } = await answerAsProviderBatch(env, questions);
    expect(done.progress).toMatchObject({ completed: 7, failed: 0 });
    for (const created of server.batchApi!.batches) {
      expect(created.lines.length).toBeLessThanOrEqual(2);
      const bytes = created.lines.reduce((sum, line) => sum + JSON.stringify(line).length + 1, 0);
      // A request larger than the limit goes alone; never two when together they pass it.
      if (created.lines.length > 1) expect(bytes).toBeLessThanOrEqual(1024);
    }
    const withLong = server.batchApi!.batches.filter((created) =>
      created.lines.some((line) => JSON.stringify(line).includes(long)),
    );
    expect(withLong.every((created) => created.lines.length === 1)).toBe(true);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
