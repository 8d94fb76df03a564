import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { eventually } from '../helpers/test-env.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

interface BatchBody {
  id: string;
  status: string;
  concurrency: number;
  providerBatch?: {
    batches: { id: string | null; status: string; requests: number; requestCounts: unknown }[];
    parked: number;
    costUsd: number;
    liveCostUsd: number;
  };
}

/** The provider's Batch API: opting in and watching a provider batch through the HTTP API and the CLI. */
describe('provider batches: HTTP API and CLI', () => {
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;
  const dir = mkdtempSync(join(tmpdir(), 'agentq-provider-batch-'));
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: () => ({ content: 'batched answer', usage: { prompt_tokens: 1000, completion_tokens: 100 } }),
      batchApi: { processingMs: 100 },
    });
    env = await startApiTestEnv({
      graphs: [twoTurnGraph()],
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_PRICES: 'scripted-chat:1:4',
        AGENTQ_BATCH_PRICES: 'scripted-chat:0.4:1.6',
        AGENTQ_PROVIDER_BATCH_POLL_MS: '100',
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POST /v1/batches with "providerBatch": true; GET shows its provider batches and the cost at batch prices beside live', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: {
        questions: [{ question: 'one' }, { question: 'two' }],
        options: { graph: 'two-turns' },
        providerBatch: true,
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const batch = json<BatchBody>(created);
    expect(batch.concurrency).toBe(2);
    // No provider batch yet; its runs may already have parked their first calls (a run's first step can
    // reach the model before the reply is written), so parked is 0 to 2 here.
    expect(batch.providerBatch).toMatchObject({ batches: [] });
    expect(batch.providerBatch?.parked).toBeGreaterThanOrEqual(0);
    expect(batch.providerBatch?.parked).toBeLessThanOrEqual(2);
    const done = await eventually(async () => {
      const body = json<BatchBody>(await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batch.id}` }));
      return body.status === 'completed' && body;
    }, 20_000);
    expect(done.providerBatch?.batches).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^batch_scripted_/),
        status: 'completed',
        requests: 2,
        requestCounts: { total: 2, completed: 2, failed: 0 },
      }),
      expect.objectContaining({ status: 'completed', requests: 2 }),
    ]);
    // 4 answers of 1000 + 100 tokens: AGENTQ_BATCH_PRICES, beside AGENTQ_PRICES.
    expect(done.providerBatch?.costUsd).toBeCloseTo((4000 * 0.4 + 400 * 1.6) / 1e6, 12);
    expect(done.providerBatch?.liveCostUsd).toBeCloseTo((4000 * 1 + 400 * 4) / 1e6, 12);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('a concurrency above 200 needs providerBatch (a waiting run holds no worker)', async () => {
    const refused = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: { questions: [{ question: 'one' }], options: { concurrency: 500 } },
    });
    expect(refused.statusCode).toBe(400);
    expect(json<{ error: { message: string } }>(refused).error.message).toMatch(
      /at most 200 \(up to 10000 with providerBatch/,
    );
  });

  it('agentq batch --provider-batch answers the file; agentq batch status shows the provider batches and costs', async () => {
    const questions = join(dir, 'questions.jsonl');
    writeFileSync(questions, '{"id":"a","question":"first"}\n{"id":"b","question":"second"}\n');
    const out = join(dir, 'answers.jsonl');
    const cli = (...args: string[]) =>
      runCli(args, cliEnv(env.config, { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' }));
    const result = await cli(
      'batch',
      questions,
      '--graph',
      'two-turns',
      '--provider-batch',
      '--out',
      out,
      '--poll-ms',
      '100',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/model calls through the provider's Batch API/);
    const { batchId } = JSON.parse(result.stdout) as { batchId: string };
    expect(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { answer: string }).answer),
    ).toEqual(['batched answer', 'batched answer']);
    const status = await cli('batch', 'status', batchId);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^batch ${batchId}: completed`));
    expect(status.stdout).toMatch(/model calls through the provider's Batch API: 0 waiting/);
    expect(status.stdout).toMatch(/cost \$0\.002240 at batch prices \(\$0\.005600 live\)/);
    expect(status.stdout).toMatch(/batch_scripted_\d+\tcompleted\t2 requests \(2 completed, 0 failed of 2\)/);
    const asJson = JSON.parse((await cli('batch', 'status', batchId, '--json')).stdout) as BatchBody;
    expect(asJson.providerBatch?.batches).toHaveLength(2);
    const missing = await cli('batch', 'status', 'bat_nothing');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/NOT_FOUND: batch bat_nothing not found/);
  });
});

describe('provider batches: HTTP API against a provider without the Batch API', () => {
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: () => ({ content: 'x' }), batchApi: false });
    env = await startApiTestEnv({
      graphs: [twoTurnGraph()],
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  it('answers 422 PROVIDER_BATCH_UNSUPPORTED with a message that says what to do', async () => {
    const refused = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: { questions: [{ question: 'one' }], options: { graph: 'two-turns' }, providerBatch: true },
    });
    expect(refused.statusCode).toBe(422);
    expect(json<{ error: { code: string; message: string } }>(refused).error).toMatchObject({
      code: 'PROVIDER_BATCH_UNSUPPORTED',
      message: expect.stringMatching(/no Batch API .*submit without providerBatch/),
    });
  });
});
