import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/run-record.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** Provider faults through the whole path: openai SDK (maxRetries 0) → AgentqError → step processor → BullMQ. */
describe('react-agent: provider faults', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({ env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', AGENTQ_LLM_TIMEOUT_MS: '500' } });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  const ask = async () => {
    const queued = await env.client.enqueue({ graph: 'react-agent', input: { query: 'hello', tools: [] } });
    return env.client.wait(queued.id, { timeoutMs: 45_000 });
  };
  const eventsOf = async (runId: string) => {
    const events: RunEvent[] = [];
    for await (const event of env.client.events(runId)) events.push(event);
    return events;
  };
  const gaps = () => {
    const times = server.chatRequests().map((request) => request.receivedAt);
    return times.slice(1).map((time, index) => time - times[index]!);
  };

  it('429 with Retry-After: 2, three times, then 200: four requests ≥ 2 s apart, no attempt spent', async () => {
    const limited = { status: 429, retryAfter: 2 };
    server.setScript([limited, limited, limited, { content: 'finally' }]);
    const done = await ask();
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'finally' } });
    expect(server.chatRequests()).toHaveLength(4);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(2000);
    const steps = await env.client.steps(done.id);
    expect(steps.map((step) => [step.node, step.attempts])).toEqual([['model', 1]]);
    const retries = (await eventsOf(done.id)).filter((event) => event.type === 'step-retry');
    expect(retries.map((event) => [event.data.parkedMs, (event.data.error as { code: string }).code])).toEqual([
      [2000, 'RATE_LIMITED'],
      [2000, 'RATE_LIMITED'],
      [2000, 'RATE_LIMITED'],
    ]);
  }, 30_000);

  it('429 with retry-after-ms parks for that long', async () => {
    server.setScript([{ status: 429, headers: { 'retry-after-ms': '300' } }, { content: 'ok' }]);
    const done = await ask();
    expect(done.status).toBe('completed');
    expect(gaps()[0]).toBeGreaterThanOrEqual(300);
    expect((await env.client.steps(done.id))[0]?.attempts).toBe(1);
  });

  it('500 twice then 200: three requests, retried with backoff (attempts spent)', async () => {
    server.setScript([{ status: 500 }, { status: 503 }, { content: 'recovered' }]);
    const done = await ask();
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'recovered' } });
    expect(server.chatRequests()).toHaveLength(3);
    expect((await env.client.steps(done.id))[0]?.attempts).toBe(3);
    const retries = (await eventsOf(done.id)).filter((event) => event.type === 'step-retry');
    expect(retries.map((event) => (event.data.error as { code: string; retryable: boolean }).code)).toEqual(['PROVIDER_ERROR', 'PROVIDER_ERROR']);
  });

  it('429 without Retry-After retries with backoff', async () => {
    server.setScript([{ status: 429 }, { content: 'ok' }]);
    const done = await ask();
    expect(done.status).toBe('completed');
    expect(server.chatRequests()).toHaveLength(2);
    expect((await env.client.steps(done.id))[0]?.attempts).toBe(2);
  });

  it('a hang is aborted at AGENTQ_LLM_TIMEOUT_MS and retried', async () => {
    server.setScript([{ hang: true }, { content: 'awake' }]);
    const done = await ask();
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'awake' } });
    const requests = server.chatRequests();
    expect(requests).toHaveLength(2);
    expect(requests[0]!.outcome).toBe('aborted');
    expect(gaps()[0]).toBeGreaterThanOrEqual(500);
    expect((await env.client.steps(done.id))[0]?.attempts).toBe(2);
    const retry = (await eventsOf(done.id)).find((event) => event.type === 'step-retry');
    expect(retry?.data.error).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect((retry?.data.error as { message: string }).message).toMatch(/within 500 ms \(AGENTQ_LLM_TIMEOUT_MS\)/);
  });

  it('a 400 context_length_exceeded fails the run at once with the provider message and code', async () => {
    server.setScript([{ status: 400, code: 'context_length_exceeded' }, { content: 'never' }]);
    const done = await ask();
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: 'PROVIDER_ERROR', retryable: false, node: 'model', attempt: 1, details: { status: 400, code: 'context_length_exceeded' } },
    });
    expect(done.error?.message).toMatch(/HTTP 400\): This model's maximum context length is 8192 tokens/);
    expect(server.chatRequests()).toHaveLength(1);
  });
});
