import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/contracts/run-record.js';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { ApiKeys } from '../../producer/api/auth/api-keys.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { API_KEYS_ENV, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';

/**
 * The operator's tenant policy (AGENTQ_TENANT_POLICY_FILE) at the API's door, over HTTP with real keys, and
 * its pinned guardrails in what the worker runs (a run through the library client, which no door checks).
 */
/** A JSON answer's body: a run record, or the error shape. */
interface Answer {
  id?: string;
  error?: { code: string; message: string; details?: unknown };
}

describe('tenant policy', () => {
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;
  let url: string;
  let safeApp: ApiInstance;
  let safeUrl: string;
  const dir = mkdtempSync(join(tmpdir(), 'agentq-policy-'));
  const adminKeyId = ApiKeys.fromConfig({ apiKeys: API_KEYS_ENV, apiKeysFile: undefined }).authenticate(
    KEYS.acmeAdmin,
  )!.keyId;
  const policyFile = join(dir, 'policy.json');
  writeFileSync(
    policyFile,
    JSON.stringify({
      default: { graphs: ['react-agent', 'guarded-agent', 'rag-agent'] },
      tenants: {
        acme: {
          tools: ['calculator'],
          pinnedGuardrails: { input: [{ name: 'deny_list', options: { keywords: ['forbidden'] } }] },
          model: { names: ['scripted-chat'], temperature: { max: 1 }, maxOutputTokens: { max: 1000 } },
        },
        globex: { graphs: '*', systemPrompt: true, variables: 'system', runGuardrails: true, images: false },
      },
      keys: { [adminKeyId]: { systemPrompt: true, runGuardrails: true } },
    }),
  );

  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startApiTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', AGENTQ_TENANT_POLICY_FILE: policyFile },
      graphs: [createReactAgentGraph({ name: 'guarded-agent', guardrails: { input: ['max_input_length'] } })],
    });
    url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    // The same keys without a policy file: the built-in safe default.
    safeApp = await createApi({
      config: { ...env.config, tenantPolicy: undefined },
      logger: createLogger(env.config.logLevel),
    });
    safeUrl = await safeApp.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await safeApp?.close();
    await env?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // Runs queued by one test may still be asking the model in the next: every request gets an answer.
  beforeEach(() => {
    server.reset();
    server.setScript(() => ({ content: 'ok' }));
  });

  const post = async (key: string, path: string, body: unknown, base = url) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Answer };
  };
  const run = (key: string, input: Record<string, unknown>, graph = 'react-agent', base = url) =>
    post(key, '/v1/runs', { graph, input: { query: 'What is 2+2?', tools: [], ...input } }, base);
  const expectDenied = (
    answer: { status: number; body: Answer },
    details: { control: string; field: string; policyEntry: string },
  ) => {
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({
      code: 'POLICY_DENIED',
      message: expect.stringContaining('AGENTQ_TENANT_POLICY_FILE'),
      details: expect.objectContaining(details),
    });
  };

  it('the graph allow-list: a graph outside it is 403, one inside it is queued', async () => {
    expectDenied(await run(KEYS.acmeProducer, {}, 'chain'), {
      control: 'graphs',
      field: 'graph',
      policyEntry: 'tenants.acme',
    });
    expect((await run(KEYS.acmeProducer, {})).status).toBe(202);
    // Schedules and batches create runs later: their graph is held when they are created.
    expectDenied(await post(KEYS.acmeProducer, '/v1/schedules', { graph: 'chain', input: {}, everyMs: 60_000 }), {
      control: 'graphs',
      field: 'graph',
      policyEntry: 'tenants.acme',
    });
    expectDenied(
      await post(KEYS.acmeProducer, '/v1/batches', { questions: [{ question: 'q' }], options: { graph: 'chain' } }),
      { control: 'graphs', field: 'graph', policyEntry: 'tenants.acme' },
    );
    // globex's own entry allows every graph.
    expect((await post(KEYS.globexProducer, '/v1/runs', { graph: 'chain', input: {} })).status).toBe(202);
  });

  it('the tool allow-list: a tool outside it is 403, at /v1/runs and at /v1/agent/chat', async () => {
    expectDenied(await run(KEYS.acmeProducer, { tools: ['calculator', 'current_time'] }), {
      control: 'tools',
      field: 'tools',
      policyEntry: 'tenants.acme',
    });
    expectDenied(await post(KEYS.acmeProducer, '/v1/agent/chat', { query: 'q', tools: ['current_time'] }), {
      control: 'tools',
      field: 'tools',
      policyEntry: 'tenants.acme',
    });
    expect((await run(KEYS.acmeProducer, { tools: ['calculator'] })).status).toBe(202);
  });

  it('model settings: a model name and bounds outside the policy are 403, inside are queued', async () => {
    expectDenied(await run(KEYS.acmeProducer, { model: 'gpt-expensive' }), {
      control: 'model',
      field: 'model',
      policyEntry: 'tenants.acme',
    });
    expectDenied(await run(KEYS.acmeProducer, { temperature: 1.5 }), {
      control: 'model',
      field: 'temperature',
      policyEntry: 'tenants.acme',
    });
    expectDenied(await run(KEYS.acmeProducer, { maxOutputTokens: 5000 }), {
      control: 'model',
      field: 'maxOutputTokens',
      policyEntry: 'tenants.acme',
    });
    const allowed = await run(KEYS.acmeProducer, { model: 'scripted-chat', temperature: 0.5, maxOutputTokens: 500 });
    expect(allowed.status).toBe(202);
  });

  it('system prompt and variables: per tenant and per key; variables never reach the system part unless allowed', async () => {
    expectDenied(await run(KEYS.acmeProducer, { system: 'You obey the user.' }), {
      control: 'systemPrompt',
      field: 'system',
      policyEntry: 'tenants.acme',
    });
    // The admin key's own entry allows a system prompt, but its variables stay out of it.
    expect((await run(KEYS.acmeAdmin, { system: 'You are terse.' })).status).toBe(202);
    expectDenied(await run(KEYS.acmeAdmin, { system: 'You are {{persona}}.', variables: { persona: 'root' } }), {
      control: 'variables',
      field: 'system',
      policyEntry: `keys.${adminKeyId}`,
    });
    expect((await run(KEYS.acmeAdmin, { query: 'Hi {{name}}', variables: { name: 'Ada' } })).status).toBe(202);
    // globex may: the model receives the rendered system prompt.
    const queued = await run(KEYS.globexProducer, {
      system: 'You are {{persona}}.',
      variables: { persona: 'a librarian' },
    });
    expect(queued.status).toBe(202);
    const done = await env.client.wait(queued.body.id!, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', error: null });
    const systems = server.chatRequests().map((request) => (request.body.messages as unknown as Message[])[0]!.content);
    expect(systems).toContain('You are a librarian.');
  });

  it('images: a tenant whose policy refuses them gets 403 for an image part', async () => {
    const query = [
      { type: 'text', text: 'What is in the picture?' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
    ];
    expectDenied(await run(KEYS.globexProducer, { query }), {
      control: 'images',
      field: 'query',
      policyEntry: 'tenants.globex',
    });
  });

  it("guardrails: a run cannot switch the graph's off through the API, nor the pinned ones through any door", async () => {
    expectDenied(await run(KEYS.acmeProducer, { guardrails: { input: [] } }, 'guarded-agent'), {
      control: 'guardrails',
      field: 'guardrails',
      policyEntry: 'tenants.acme',
    });
    // The library client reaches Redis without the API: the worker still runs acme's pinned deny_list.
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      tenant: 'acme',
      input: { query: 'tell me the forbidden thing', tools: [], guardrails: { input: [], output: [] } },
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.error).toMatchObject({ code: 'GUARDRAIL_BLOCKED', details: { guardrail: 'deny_list' } });
    expect(done.error).toMatchObject({ node: 'input_guard' });
    expect((await env.client.steps(done.id)).map((step) => step.node)).not.toContain('model');
    // Another tenant's run of the same input is not held by acme's pins.
    const other = await env.client.enqueue({
      graph: 'react-agent',
      tenant: 'globex',
      input: { query: 'tell me the forbidden thing', tools: [], guardrails: { input: [], output: [] } },
    });
    expect((await env.client.wait(other.id, { timeoutMs: 30_000 })).status).toBe('completed');
  });

  it("a fork's set is held like a run's input, and a guardrail plan it sets keeps the tenant's pinned ones", async () => {
    const queued = await run(KEYS.acmeProducer, { query: 'hello there' });
    const original = await env.client.wait(queued.body.id!, { timeoutMs: 30_000 });
    expect(original.status).toBe('completed');
    const fork = (key: string, set: Record<string, unknown>) =>
      post(key, `/v1/runs/${original.id}/fork`, { from: 0, set });
    expectDenied(await fork(KEYS.acmeProducer, { system: 'You obey.' }), {
      control: 'systemPrompt',
      field: 'system',
      policyEntry: 'tenants.acme',
    });
    expectDenied(await fork(KEYS.acmeProducer, { settings: { model: 'gpt-expensive' } }), {
      control: 'model',
      field: 'model',
      policyEntry: 'tenants.acme',
    });
    // The admin key may set guardrails, but not drop acme's pinned deny_list: the fork's first step checks it.
    const forked = await fork(KEYS.acmeAdmin, {
      query: 'the forbidden thing',
      guardrails: { input: [], output: [], maxReprompts: 2 },
    });
    expect(forked.status).toBe(202);
    const done = await env.client.wait(forked.body.id!, { timeoutMs: 30_000 });
    expect(done.error).toMatchObject({ code: 'GUARDRAIL_BLOCKED', details: { guardrail: 'deny_list' } });
  });

  it('keyed without a policy file: the safe default refuses system, guardrails, variables in system, model and unsafe tools', async () => {
    const safe = (input: Record<string, unknown>) => run(KEYS.acmeProducer, input, 'react-agent', safeUrl);
    const entry = '(built-in safe default)';
    expectDenied(await safe({ system: 'x' }), { control: 'systemPrompt', field: 'system', policyEntry: entry });
    expectDenied(await safe({ guardrails: { output: [] } }), {
      control: 'guardrails',
      field: 'guardrails',
      policyEntry: entry,
    });
    expectDenied(await safe({ model: 'other-model' }), { control: 'model', field: 'model', policyEntry: entry });
    expectDenied(await safe({ maxOutputTokens: 100_000 }), {
      control: 'model',
      field: 'maxOutputTokens',
      policyEntry: entry,
    });
    expectDenied(await safe({ tools: ['http_fetch'] }), { control: 'tools', field: 'tools', policyEntry: entry });
    expect((await safe({ tools: ['calculator'], query: 'Hi {{n}}', variables: { n: 'x' } })).status).toBe(202);
  });
});
