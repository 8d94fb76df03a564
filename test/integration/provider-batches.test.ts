import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

/** Issue 38: a batch's model calls through the provider's Batch API, against the scripted server's Batch API. */
describe('provider batches: model calls through the Batch API', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    // Each answer repeats the last user message, so a test sees which turn answered what.
    server = await startScriptedOpenAIServer({
      script: (request) => {
        const messages = request.body.messages as { role: string; content: string }[];
        return { content: `re: ${messages.at(-1)?.content}`, usage: { prompt_tokens: 100, completion_tokens: 10 } };
      },
      batchApi: { validatingMs: 50, processingMs: 200 },
    });
    env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_PRICES: 'scripted-chat:2:8',
        AGENTQ_PROVIDER_BATCH_FLUSH_MS: '60000',
        AGENTQ_PROVIDER_BATCH_POLL_MS: '100',
        AGENTQ_LLM_TIMEOUT_MS: '2000',
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  it('a two-turn agent: no live call, one provider batch per turn (not per question), answers saved and used', async () => {
    const questions = Array.from({ length: 6 }, (_, index) => ({ question: `question ${index}` }));
    const { batch } = await env.client.batches.submit({
      collection: 'docs',
      questions,
      options: { graph: 'two-turns' },
      providerBatch: true,
    });
    expect(batch.concurrency).toBe(6);
    const done = await eventually(
      async () => {
        const record = await env.client.batches.get(batch.id);
        return record?.status === 'completed' && record;
      },
      30_000,
      'the batch to complete',
    );
    expect(done.progress).toMatchObject({ total: 6, completed: 6, failed: 0 });
    // Every model call went through the Batch API: no live chat request at all.
    expect(server.chatRequests()).toHaveLength(0);
    // Two turns, two provider batches of 6 requests each: every run waited for its first answer before its second call.
    expect(server.batchApi!.batches.map((created) => created.lines.length)).toEqual([6, 6]);
    expect(done.providerBatch?.batches.map((entry) => [entry.status, entry.requests])).toEqual([
      ['completed', 6],
      ['completed', 6],
    ]);
    expect(done.providerBatch?.parked).toBe(0);
    // 12 answers of 100 + 10 tokens: at batch prices (half of 2 and 8 USD per 1M) beside live prices.
    expect(done.providerBatch?.usage).toEqual({ inputTokens: 1200, outputTokens: 120 });
    expect(done.providerBatch?.liveCostUsd).toBeCloseTo((1200 * 2 + 120 * 8) / 1e6, 12);
    expect(done.providerBatch?.costUsd).toBeCloseTo((1200 * 2 + 120 * 8) / 2e6, 12);
    const results = (await env.client.batches.results(batch.id))!;
    expect(results.map((result) => result.answer)).toEqual(questions.map(() => 're: Now say it better.'));
    // The second turn asked about the first turn's answer, and each request carries its run, step and call.
    const second = server.batchApi!.batches[1]!.lines;
    expect(second.map((line) => (line.body.messages as { content: string }[])[1]!.content).sort()).toEqual(
      questions.map((question) => `re: ${question.question}`).sort(),
    );
    expect(second.map((line) => line.custom_id).sort()).toEqual(
      results.map((result) => `${result.runId}|s1.t0|model|1`).sort(),
    );
    // The run records the usage at batch prices.
    const run = await env.client.get(results[0]!.runId);
    expect(run?.usage).toMatchObject({ inputTokens: 200, outputTokens: 20 });
    expect(run?.usage.costUsd).toBeCloseTo((200 * 2 + 20 * 8) / 2e6, 12);
  });
});
