import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../shared/ports/define-tool.js';
import { TenantPolicy } from '../../shared/config/tenant-policy.js';
import { createRagAgentGraph } from '../../worker/agents/rag/rag-agent.js';
import type { ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { parseSseFrames } from '../helpers/api-sse.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';

/** A tool whose every call throws: with onToolError 'fail' its failure fails the run. */
const brokenLookup = defineTool({
  name: 'broken_lookup',
  description: 'Looks up an order (its backend is down)',
  input: z.object({ order: z.string() }),
  execute: () => {
    throw new Error('the order service answered 503');
  },
});

interface ErrorAnswer {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/**
 * `POST /v1/agent/chat` for runs that end without an answer: each expected outcome is its own status
 * with the code, the run and why, through the real API, a real worker and the scripted model.
 */
describe('HTTP API: POST /v1/agent/chat, runs that do not complete', () => {
  const data = tempDirectory('agentq-chat-outcomes-');
  let rag: RagTestEnv<ApiTestEnv>;
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;

  beforeAll(async () => {
    rag = await startRagTestEnv(
      // The chat's rag-agent, in a later version whose failing tool fails the run.
      (options) =>
        startApiTestEnv({
          ...options,
          graphs: [createRagAgentGraph({ version: '2', toolHandling: { onToolError: 'fail' } })],
          tools: [brokenLookup],
          // These chats name tools and guardrails of their own: the operator allows it here.
          api: { policy: TenantPolicy.of({ default: { tools: '*', runGuardrails: true } }) },
        }),
      data.path,
      { model: {} },
    );
    ({ env } = rag);
    server = rag.server!;
    for (const tenant of ['acme', 'globex'])
      await ingestFolder(rag.ingest, writeDocs(data.path, `paris-${tenant}`, RAG_DOCS), {
        collection: 'default',
        tenant,
      });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  const chat = (payload: Record<string, unknown>, { key = KEYS.acmeProducer as string, idempotencyKey = '' } = {}) =>
    env.as(key, {
      method: 'POST',
      url: '/v1/agent/chat',
      headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
      payload,
    });

  /** The error body, after checking it names a run of this API that failed with the same code. */
  const failedRun = async (response: LightMyRequestResponse, code: string): Promise<ErrorAnswer['error']> => {
    const { error } = json<ErrorAnswer>(response);
    expect(error.code).toBe(code);
    const runId = error.details.runId as string;
    const run = json(await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${runId}` }));
    expect(run).toMatchObject({ status: 'failed', error: { code } });
    return error;
  };

  const denySecret = { input: [{ name: 'deny_list', options: { keywords: ['secret'] } }] };

  it('a guardrail block is 422 GUARDRAIL_BLOCKED naming the guardrail, the stage and the reason; the model is never asked', async () => {
    const response = await chat({ query: 'What is the secret of the tower?', guardrails: denySecret });
    expect(response.statusCode).toBe(422);
    const error = await failedRun(response, 'GUARDRAIL_BLOCKED');
    expect(error.details).toMatchObject({
      guardrail: 'deny_list',
      stage: 'input',
      reason: expect.stringContaining('secret'),
      node: 'model',
    });
    expect(error.message).toContain("guardrail 'deny_list' blocked the input");
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('streamed, the same block ends the event stream with an error event carrying the same body and status', async () => {
    const response = await chat({ query: 'What is the secret of the tower?', guardrails: denySecret, stream: true });
    expect(response.statusCode).toBe(200);
    const frames = parseSseFrames(response.body);
    expect(frames.map((frame) => frame.event)).toEqual(['run', 'error']);
    const event = JSON.parse(frames[1]!.data!) as ErrorAnswer & { status: number };
    expect(event.status).toBe(422);
    expect(event.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: {
        guardrail: 'deny_list',
        stage: 'input',
        runId: (JSON.parse(frames[0]!.data!) as { run_id: string }).run_id,
      },
    });
  });

  it("a tool failure the run's tool handling fails on is 424 TOOL_ERROR naming the tool step and the tool's error", async () => {
    server.setScript(() => ({ toolCalls: [{ name: 'broken_lookup', arguments: { order: 'A-1' } }] }));
    const response = await chat({ query: 'Where is my order A-1?', tools: ['broken_lookup'] });
    expect(response.statusCode).toBe(424);
    const error = await failedRun(response, 'TOOL_ERROR');
    expect(error.details).toMatchObject({ node: 'tool', stage: 'tool' });
    expect(error.details.reason).toContain("tool 'broken_lookup' failed: the order service answered 503");
  });

  it('an input the worker finds wrong (a tool it does not have) is 400 INVALID_INPUT with the run and the reason', async () => {
    const response = await chat({ query: 'Where is my order A-1?', tools: ['no_such_tool'] });
    expect(response.statusCode).toBe(400);
    const error = await failedRun(response, 'INVALID_INPUT');
    expect(error.details.reason).toContain("unknown tool 'no_such_tool'");
  });

  it("the run's token budget (options.tokenBudget, of the run the same Idempotency-Key names) overrun is 422 BUDGET_EXCEEDED naming the budget", async () => {
    // The chat body has no options: the run with a budget is enqueued on POST /v1/runs, and the chat
    // with the same Idempotency-Key answers for that run, as it does for any replayed key.
    const query = 'Who drew the first sketch of the Eiffel Tower?';
    const enqueued = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      headers: { 'idempotency-key': 'chat-budget' },
      payload: { graph: 'rag-agent', input: { query }, options: { tokenBudget: 5 } },
    });
    expect(enqueued.statusCode).toBe(202);
    const response = await chat({ query }, { idempotencyKey: 'chat-budget' });
    expect(response.statusCode).toBe(422);
    const error = await failedRun(response, 'BUDGET_EXCEEDED');
    expect(error.details).toMatchObject({ runId: json(enqueued).id, budget: 'tokenBudget', node: 'model' });
    expect(error.details.reason).toContain('token budget');
    expect(server.chatRequests()).toHaveLength(0);
  });

  it("the tenant's spent budget is 429 TENANT_BUDGET_EXCEEDED naming the budget", async () => {
    const limits = (payload: Record<string, unknown>) =>
      env.as(KEYS.acmeAdmin, { method: 'PUT', url: '/v1/admin/tenants/globex/limits', payload });
    expect((await limits({ tokensPerDay: 1 })).statusCode).toBe(200);
    try {
      const response = await chat(
        { query: 'Who drew the first sketch of the Eiffel Tower?' },
        { key: KEYS.globexProducer },
      );
      expect(response.statusCode).toBe(429);
      const { error } = json<ErrorAnswer>(response);
      expect(error.code).toBe('TENANT_BUDGET_EXCEEDED');
      expect(error.details).toMatchObject({ budget: 'tokensPerDay', tenant: 'globex', node: 'model' });
      expect(error.details.reason).toContain('tokensPerDay budget');
    } finally {
      await limits({});
    }
  });

  it("a model's refusal is 422 MODEL_REFUSED and a filtered answer 422 CONTENT_FILTERED, each with the provider's reason", async () => {
    server.setScript(() => ({ refusal: "I can't help with that." }));
    const refused = await chat({ query: 'Who drew the first sketch of the Eiffel Tower?' });
    expect(refused.statusCode).toBe(422);
    const refusal = await failedRun(refused, 'MODEL_REFUSED');
    expect(refusal.details).toMatchObject({ node: 'model', stage: 'model' });
    expect(refusal.details.reason).toContain("I can't help with that.");
    server.setScript(() => ({ finishReason: 'content_filter' }));
    const filtered = await chat({ query: 'Who drew the first sketch of the Eiffel Tower?' });
    expect(filtered.statusCode).toBe(422);
    await failedRun(filtered, 'CONTENT_FILTERED');
  });

  it("a model provider that refuses the request is 502 PROVIDER_ERROR with the provider's reason", async () => {
    server.setScript(() => ({ status: 400, code: 'invalid_api_key', message: 'Incorrect API key provided' }));
    const response = await chat({ query: 'Who drew the first sketch of the Eiffel Tower?' });
    expect(response.statusCode).toBe(502);
    const error = await failedRun(response, 'PROVIDER_ERROR');
    expect(error.details).toMatchObject({ node: 'model' });
    expect(error.details.reason).toContain('Incorrect API key provided');
  });
});
