import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { calculatorScript } from '../helpers/time-travel-scripts.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';

/** The HTTP side of time travel: fork, replay, its report, bulk retry; tenants see only their own. */
describe('API: fork, replay and bulk retry', () => {
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;
  let original: RunRecord;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: calculatorScript });
    env = await startApiTestEnv({ env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' } });
    const created = json<RunRecord>(
      await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/runs',
        payload: { graph: 'react-agent', input: { query: 'what is 6*7?', tools: ['calculator'] } },
      }),
    );
    original = await env.client.wait(created.id, { timeoutMs: 30_000 });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  it('POST /v1/runs/:id/fork: 202 with the fork, which inherits the steps before the fork point', async () => {
    expect(original.status).toBe('completed');
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: `/v1/runs/${original.id}/fork`,
      payload: { from: 2, set: { answer: 'patched' } },
    });
    expect(response.statusCode).toBe(202);
    const fork = json<RunRecord>(response);
    expect(fork).toMatchObject({ status: 'queued', forkOf: { runId: original.id, step: 2, patched: ['answer'] } });
    expect(response.headers.location).toBe(`/v1/runs/${fork.id}`);
    const done = await env.client.wait(fork.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(server.chatRequests()).toHaveLength(1);
    const steps = json<{ steps: { inheritedFrom?: string }[] }>(
      await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${fork.id}/steps` }),
    ).steps;
    expect(steps.map((step) => step.inheritedFrom ?? null)).toEqual([original.id, original.id, null]);
  });

  it('fork: another tenant’s run and an unknown run answer 404 alike; an unknown step 404; a bad patch 400 naming the field', async () => {
    const foreign = await env.as(KEYS.globexProducer, {
      method: 'POST',
      url: `/v1/runs/${original.id}/fork`,
      payload: { from: 0 },
    });
    const missing = await env.as(KEYS.globexProducer, {
      method: 'POST',
      url: '/v1/runs/run_nope/fork',
      payload: { from: 0 },
    });
    expect(foreign.statusCode).toBe(404);
    expect(json<{ error: { message: string } }>(foreign).error.message).toBe(
      `run ${original.id} not found (it may never have existed, or it expired or was purged)`,
    );
    expect(missing.statusCode).toBe(404);
    const step = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: `/v1/runs/${original.id}/fork`,
      payload: { from: 9 },
    });
    expect(step.statusCode).toBe(404);
    const patch = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: `/v1/runs/${original.id}/fork`,
      payload: { from: 0, set: { nonsense: 1 } },
    });
    expect(patch.statusCode).toBe(400);
    expect(json<{ error: { code: string; message: string } }>(patch).error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('set.nonsense'),
    });
    const body = await env.as(KEYS.acmeProducer, { method: 'POST', url: `/v1/runs/${original.id}/fork`, payload: {} });
    expect(body.statusCode).toBe(400);
  });

  it('fork: a patch of the model settings or the query images is checked as the input was (400 naming the field, no fork, no model call)', async () => {
    const refusals = [
      { set: { settings: { temperature: 7 } }, field: 'set.settings.temperature' },
      {
        set: { queryImages: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] },
        field: 'set.queryImages.0.image_url.url',
      },
    ];
    const before = (await env.client.store.reads.list('acme', { limit: 1000 })).runs.length;
    for (const { set, field } of refusals) {
      const patch = await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: `/v1/runs/${original.id}/fork`,
        payload: { from: 0, set },
      });
      expect(patch.statusCode).toBe(400);
      const { error } = json<{ error: { code: string; message: string; details: { path: string }[] } }>(patch);
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.message).toContain(field);
      expect(error.details.map((detail) => detail.path)).toContain(field);
    }
    expect((await env.client.store.reads.list('acme', { limit: 1000 })).runs).toHaveLength(before);
    expect(server.chatRequests()).toHaveLength(0);
    // A setting in bounds is a fork like any other.
    const fine = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: `/v1/runs/${original.id}/fork`,
      payload: { from: 0, set: { settings: { temperature: 0.5 } } },
    });
    expect(fine.statusCode).toBe(202);
    await env.client.wait(json<RunRecord>(fine).id, { timeoutMs: 30_000 });
  });

  it('POST /v1/runs/:id/replay then GET …/replay-report: same, with zero model requests; foreign runs 404', async () => {
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: `/v1/runs/${original.id}/replay`,
      payload: {},
    });
    expect(response.statusCode).toBe(202);
    const replay = json<RunRecord>(response);
    expect(replay.replayOf).toEqual({ runId: original.id, live: false });
    await env.client.wait(replay.id, { timeoutMs: 30_000 });
    expect(server.chatRequests()).toHaveLength(0);
    const report = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${replay.id}/replay-report` });
    expect(report.statusCode).toBe(200);
    expect(json(report)).toMatchObject({ diverged: false, outcome: 'same', replayOf: original.id });
    expect(
      (await env.as(KEYS.globexProducer, { method: 'POST', url: `/v1/runs/${original.id}/replay`, payload: {} }))
        .statusCode,
    ).toBe(404);
    expect(
      (await env.as(KEYS.globexProducer, { method: 'GET', url: `/v1/runs/${replay.id}/replay-report` })).statusCode,
    ).toBe(404);
    const notReplay = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${original.id}/replay-report` });
    expect(notReplay.statusCode).toBe(400);
  });

  it('GET /v1/runs?status=failed&error=…&since=… and POST /v1/runs/retry (dry run, then for real) see only the caller’s runs', async () => {
    server.setScript([{ status: 400, message: 'bad request' }]);
    const failed = json<RunRecord>(
      await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/runs',
        payload: { graph: 'react-agent', input: { query: 'x' } },
      }),
    );
    expect((await env.client.wait(failed.id, { timeoutMs: 30_000 })).error?.code).toBe('PROVIDER_ERROR');
    const list = await env.as(KEYS.acmeProducer, {
      method: 'GET',
      url: '/v1/runs?status=failed&error=PROVIDER_ERROR&since=1h',
    });
    expect(json<{ runs: RunRecord[] }>(list).runs.map((run) => run.id)).toEqual([failed.id]);
    const badSince = await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/runs?since=yesterday' });
    expect(badSince.statusCode).toBe(400);
    expect(json<{ error: { message: string } }>(badSince).error.message).toContain("since 'yesterday'");

    const foreign = await env.as(KEYS.globexProducer, {
      method: 'POST',
      url: '/v1/runs/retry',
      payload: { status: 'failed', error: 'PROVIDER_ERROR' },
    });
    expect(json(foreign)).toMatchObject({ matched: 0 });
    const dry = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs/retry',
      payload: { status: 'failed', error: 'PROVIDER_ERROR', since: '1h', dryRun: true },
    });
    expect(json(dry)).toMatchObject({ dryRun: true, matched: 1, runs: [failed.id], retried: [] });
    server.setScript([{ content: 'fine now' }]);
    const retried = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs/retry',
      payload: { status: 'failed', error: 'PROVIDER_ERROR', since: '1h' },
    });
    expect(retried.statusCode).toBe(200);
    expect(json(retried)).toMatchObject({ matched: 1, retried: [failed.id] });
    expect(await env.client.wait(failed.id, { timeoutMs: 30_000 })).toMatchObject({
      status: 'completed',
      retryOf: { attempts: 1, error: { code: 'PROVIDER_ERROR' } },
    });
  });
});
