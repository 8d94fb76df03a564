import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../producer/api/create-api.js';
import { channel } from '../../shared/graph/channels.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { tenantRunId } from '../../shared/contracts/ids.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { parseSseFrames, readSse } from '../helpers/api-sse.js';
import { Calls, threeStepGraph } from '../helpers/test-graphs.js';
import { eventually } from '../helpers/test-env.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { loadScaledMs } from '../helpers/load-scale.js';

const calls = new Calls();
const failing = new Set<string>();

const approval = defineGraph({ name: 'approval', state: { verdict: channel.replace('') }, output: (state) => state })
  .node('ask', (_state, context) => {
    const answer = context.interrupt<{ approved: boolean }>({ question: 'approve?' });
    return { verdict: answer.approved ? 'approved' : 'rejected' };
  })
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

const { acmeProducer: producer } = KEYS;

describe('HTTP API v1: runs', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({
      graphs: [approval, threeStepGraph(calls, failing)],
      // A loaded machine answers slower than the producer's default 750 ms command timeout (a 503).
      env: { AGENTQ_BODY_LIMIT_BYTES: '4096', AGENTQ_REDIS_COMMAND_TIMEOUT_MS: String(loadScaledMs(750)) },
    });
  });
  afterAll(async () => env?.close());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    env.as(producer, { method: 'POST', url: '/v1/runs', payload: body as object, headers });
  const get = (url: string, headers: Record<string, string> = {}) => env.as(producer, { method: 'GET', url, headers });
  const waitFor = async (id: string, status: RunRecord['status']) =>
    eventually(
      async () => {
        const record = json<RunRecord>(await get(`/v1/runs/${id}`));
        return record.status === status ? record : undefined;
      },
      15_000,
      `run ${id} to be ${status}`,
    );

  it('POST /v1/runs answers 202 with the run record, and GET /v1/runs/:id serves what `agentq status --json` prints', async () => {
    const created = await post({ graph: 'chain', input: { steps: 2 } });
    expect(created.statusCode).toBe(202);
    const queued = json<RunRecord>(created);
    expect(queued).toMatchObject({ status: 'queued', graph: 'chain', tenant: 'acme', stepCount: 0 });
    expect(created.headers.location).toBe(`/v1/runs/${queued.id}`);
    const done = await waitFor(queued.id, 'completed');
    expect(done.output).toEqual({ visited: [0, 1] });

    const status = await runCli(['status', queued.id, '--json'], cliEnv(env.config));
    expect(status.code, status.stderr).toBe(0);
    expect(json(await get(`/v1/runs/${queued.id}`))).toEqual(JSON.parse(status.stdout));
  });

  it('honours Idempotency-Key: the same key returns the same run and adds nothing twice', async () => {
    const first = await post({ graph: 'chain', input: { steps: 1 } }, { 'idempotency-key': 'order-42' });
    const again = await post({ graph: 'chain', input: { steps: 1 } }, { 'idempotency-key': 'order-42' });
    expect(first.statusCode).toBe(202);
    expect(again.statusCode).toBe(202);
    expect(json(again).id).toBe(json(first).id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    await waitFor(json(first).id as string, 'completed');
    const afterwards = await post({ graph: 'chain', input: { steps: 1 } }, { 'idempotency-key': 'order-42' });
    expect(json(afterwards)).toMatchObject({ id: json(first).id, status: 'completed' });
    expect(json<{ steps: unknown[] }>(await get(`/v1/runs/${json(first).id}/steps`)).steps).toHaveLength(1);
    // Another tenant's equal key is another run.
    const globex = await env.as(KEYS.globexProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'chain', input: { steps: 1 } },
      headers: { 'idempotency-key': 'order-42' },
    });
    expect(json(globex).id).not.toBe(json(first).id);
    // Header and body disagreeing is refused.
    const mismatch = await post(
      { graph: 'chain', input: { steps: 1 }, idempotencyKey: 'order-43' },
      { 'idempotency-key': 'order-42' },
    );
    expect(mismatch.statusCode).toBe(400);
    expect(json(mismatch)).toEqual({
      error: { code: 'INVALID_INPUT', message: expect.stringContaining('Idempotency-Key') },
    });
  });

  it("GET /v1/runs lists only the caller's runs, filtered by status and graph, with a cursor", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1)
      ids.push(json(await post({ graph: 'chain', input: { steps: 1 } })).id as string);
    for (const id of ids) await waitFor(id, 'completed');
    const firstPage = json<{ runs: RunRecord[]; nextCursor: string | null }>(
      await get('/v1/runs?limit=2&graph=chain&status=completed'),
    );
    expect(firstPage.runs).toHaveLength(2);
    expect(firstPage.nextCursor).toEqual(expect.any(String));
    const rest = json<{ runs: RunRecord[] }>(
      await get(`/v1/runs?limit=200&graph=chain&status=completed&cursor=${firstPage.nextCursor}`),
    );
    const listed = [...firstPage.runs, ...rest.runs].map((run) => run.id);
    expect(new Set(listed).size).toBe(listed.length);
    for (const id of ids) expect(listed).toContain(id);
    expect([...firstPage.runs, ...rest.runs].every((run) => run.tenant === 'acme' && run.status === 'completed')).toBe(
      true,
    );
    const globex = json<{ runs: RunRecord[] }>(
      await env.as(KEYS.globexProducer, { method: 'GET', url: '/v1/runs?limit=200' }),
    );
    expect(globex.runs.some((run) => ids.includes(run.id))).toBe(false);
    const badCursor = await get('/v1/runs?cursor=not-a-cursor');
    expect(badCursor.statusCode).toBe(400);
    expect(json(badCursor)).toMatchObject({
      error: { code: 'INVALID_INPUT', message: expect.stringContaining('cursor') },
    });
    const badStatus = await get('/v1/runs?status=finished');
    expect(badStatus.statusCode).toBe(400);
    expect(json(badStatus)).toMatchObject({ error: { message: expect.stringMatching(/^querystring\.status: /) } });
  });

  it('GET /v1/runs/:id/messages and /steps serve the history and the step log', async () => {
    const id = json(await post({ graph: 'chain', input: { steps: 2, appendMessages: true } })).id as string;
    await waitFor(id, 'completed');
    expect(json(await get(`/v1/runs/${id}/messages`))).toEqual({
      messages: [
        { role: 'assistant', content: 'step 0' },
        { role: 'assistant', content: 'step 1' },
      ],
      // One page: the whole history (pages are read with ?cursor=…&limit=…).
      nextCursor: null,
      total: 2,
    });
    const { steps } = json<{ steps: { index: number; node: string }[] }>(await get(`/v1/runs/${id}/steps`));
    expect(steps.map((step) => [step.index, step.node])).toEqual([
      [0, 'step'],
      [1, 'step'],
    ]);
  });

  it('GET /v1/runs/:id/events sends every event, in order, to a client that connects after the run ended, then ends', async () => {
    const id = json(await post({ graph: 'chain', input: { steps: 2 } })).id as string;
    await waitFor(id, 'completed');
    const response = await get(`/v1/runs/${id}/events`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = parseSseFrames(response.body);
    expect(frames.map((frame) => frame.event)).toEqual([
      'run-start',
      'step-start',
      'step-end',
      'step-start',
      'step-end',
      'run-end',
    ]);
    // A frame's id is the resume cursor `<event id>_<token id>`: the event's own id, then the token log's.
    for (const frame of frames)
      expect(JSON.parse(frame.data!)).toMatchObject({ id: frame.id!.split('_')[0], type: frame.event });
    const ended = JSON.parse(frames.at(-1)!.data!) as { data: { status: string } };
    expect(ended.data.status).toBe('completed');
    const badResume = await get(`/v1/runs/${id}/events`, { 'last-event-id': 'yesterday' });
    expect(badResume.statusCode).toBe(400);
    expect(json(badResume)).toMatchObject({ error: { message: expect.stringContaining('Last-Event-ID') } });
  });

  it('streams live events over HTTP and resumes after Last-Event-ID without losing or repeating one', async () => {
    const url = await env.app.listen({ port: 0, host: '127.0.0.1' });
    const id = json(await post({ graph: 'chain', input: { steps: 4, sleepMs: 150 } })).id as string;
    const first = new AbortController();
    const response = await fetch(`${url}/v1/runs/${id}/events`, {
      headers: { authorization: `Bearer ${producer}` },
      signal: first.signal,
    });
    expect(response.status).toBe(200);
    const before = await readSse(response.body!, (frames) => frames.length >= 3);
    first.abort();
    expect(before.map((frame) => frame.event).slice(0, 3)).toEqual(['run-start', 'step-start', 'step-end']);
    const lastSeen = before.at(-1)!.id!;
    const resumed = await fetch(`${url}/v1/runs/${id}/events`, {
      headers: { authorization: `Bearer ${producer}`, 'last-event-id': lastSeen },
    });
    const after = await readSse(resumed.body!);
    const ids = [...before, ...after].map((frame) => frame.id);
    expect(new Set(ids).size).toBe(ids.length);
    const all = parseSseFrames((await get(`/v1/runs/${id}/events`)).body);
    expect([...before, ...after].map((frame) => [frame.id, frame.event])).toEqual(
      all.map((frame) => [frame.id, frame.event]),
    );
    expect(after.at(-1)!.event).toBe('run-end');
  });

  it('closing the API ends its open event streams at once instead of waiting for their runs', async () => {
    const second = await createApi({ config: env.config, logger: createLogger('silent') });
    const url = await second.listen({ port: 0, host: '127.0.0.1' });
    const id = json(await post({ graph: 'chain', input: { steps: 1, sleepMs: 20_000 } })).id as string;
    const response = await fetch(`${url}/v1/runs/${id}/events`, { headers: { authorization: `Bearer ${producer}` } });
    const frames = readSse(response.body!);
    await waitFor(id, 'running');
    await second.close();
    // close() returned while the run (a 20-second step) still runs: it did not wait for the stream's run.
    expect(json(await get(`/v1/runs/${id}`)).status).toBe('running');
    // …and the stream it had open has ended (the client's read completes).
    expect(Array.isArray(await frames)).toBe(true);
    await env.as(producer, { method: 'DELETE', url: `/v1/runs/${id}` });
  });

  it('DELETE /v1/runs/:id cancels a running run (202, then cancelled) and ?purge=true deletes a finished one (204)', async () => {
    const id = json(await post({ graph: 'chain', input: { steps: 1, sleepMs: 20_000 } })).id as string;
    await waitFor(id, 'running');
    const cancelling = await env.as(producer, { method: 'DELETE', url: `/v1/runs/${id}` });
    expect([200, 202]).toContain(cancelling.statusCode);
    await waitFor(id, 'cancelled');
    const again = await env.as(producer, { method: 'DELETE', url: `/v1/runs/${id}` });
    expect(again.statusCode).toBe(200);
    expect(json(again)).toMatchObject({ id, status: 'cancelled', error: { code: 'CANCELLED' } });
    const badPurge = await env.as(producer, { method: 'DELETE', url: `/v1/runs/${id}?purge=yes` });
    expect(badPurge.statusCode).toBe(400);
    const purged = await env.as(producer, { method: 'DELETE', url: `/v1/runs/${id}?purge=true` });
    expect(purged.statusCode).toBe(204);
    expect((await get(`/v1/runs/${id}`)).statusCode).toBe(404);
  });

  it('POST /v1/runs/:id/retry retries a failed run from its last commit; other states answer 409', async () => {
    const id = 'api-retry-run';
    // The graph sees the stored id: acme's client-chosen name scoped by tenant (tenantRunId).
    const stored = tenantRunId('acme', id);
    failing.add(stored);
    expect((await post({ graph: 'three', input: null, runId: id })).statusCode).toBe(202);
    const failed = await waitFor(id, 'failed');
    expect(failed.error).toMatchObject({ code: 'TOOL_ERROR' });
    failing.delete(stored);
    const retried = await env.as(producer, { method: 'POST', url: `/v1/runs/${id}/retry` });
    expect(retried.statusCode).toBe(202);
    const done = await waitFor(id, 'completed');
    expect(done.output).toEqual(['a', 'b', 'c']);
    expect(calls.of(stored, 'a')).toBe(1);
    const conflict = await env.as(producer, { method: 'POST', url: `/v1/runs/${id}/retry` });
    expect(conflict.statusCode).toBe(409);
    expect(json(conflict)).toEqual({
      error: { code: 'CONFLICT', message: `run ${id} is completed; only a failed run can be retried` },
    });
  });

  it('POST /v1/runs/:id/resume answers an interrupt with {value}', async () => {
    const id = json(await post({ graph: 'approval', input: null })).id as string;
    const waiting = await waitFor(id, 'waiting');
    expect(waiting.interrupt).toMatchObject({ node: 'ask', request: { question: 'approve?' } });
    const missingValue = await env.as(producer, { method: 'POST', url: `/v1/runs/${id}/resume`, payload: {} });
    expect(missingValue.statusCode).toBe(400);
    expect(json(missingValue)).toMatchObject({
      error: { code: 'INVALID_INPUT', message: expect.stringContaining('body.value') },
    });
    const resumed = await env.as(producer, {
      method: 'POST',
      url: `/v1/runs/${id}/resume`,
      payload: { value: { approved: true } },
    });
    expect(resumed.statusCode).toBe(202);
    expect((await waitFor(id, 'completed')).output).toEqual({ verdict: 'approved' });
    const late = await env.as(producer, { method: 'POST', url: `/v1/runs/${id}/resume`, payload: { value: 1 } });
    expect(late.statusCode).toBe(409);
  });

  it('rejects bad requests with precise messages in the one error shape: validation, 404, 413, 415; no 501 placeholders', async () => {
    const noGraph = await post({ input: {} });
    expect(noGraph.statusCode).toBe(400);
    expect(json(noGraph)).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^body\.graph: /),
        details: [{ path: 'body.graph' }],
      },
    });
    const foreignTenant = await post({ graph: 'chain', input: {}, tenant: 'globex' });
    expect(json(foreignTenant).error).toMatchObject({
      message: 'body.tenant: tenant comes from your API key; remove it from the body',
    });
    const badOption = await post({ graph: 'chain', input: {}, options: { maxSteps: 0 } });
    expect(json(badOption).error).toMatchObject({ message: expect.stringMatching(/^body\.options\.maxSteps: .*>=1/) });
    const badWebhook = await post({ graph: 'chain', input: {}, webhookUrl: 'ftp://example.com/hook' });
    expect(json(badWebhook).error).toMatchObject({
      message: 'body.webhookUrl: webhookUrl must be an absolute http:// or https:// URL',
    });
    const badJson = await env.as(producer, {
      method: 'POST',
      url: '/v1/runs',
      payload: '{"graph": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.statusCode).toBe(400);
    expect(json(badJson).error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('not valid JSON'),
    });
    const badId = await get('/v1/runs/has%20space');
    expect(json(badId).error).toMatchObject({ message: expect.stringMatching(/^params\.id: the run id must be/) });

    const unknown = await env.app.inject({ method: 'GET', url: '/v2/everything?x=1' });
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown)).toEqual({
      error: { code: 'NOT_FOUND', message: "no route GET /v2/everything; see /docs for the API's routes" },
    });
    const missingRun = await get('/v1/runs/run_missing');
    expect(json(missingRun)).toEqual({
      error: {
        code: 'NOT_FOUND',
        message: 'run run_missing not found (it may never have existed, or it expired or was purged)',
      },
    });

    const large = await post({ graph: 'chain', input: { text: 'x'.repeat(5000) } });
    expect(large.statusCode).toBe(413);
    expect(json(large)).toEqual({
      error: { code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('4096 bytes') },
    });
    const text = await env.as(producer, {
      method: 'POST',
      url: '/v1/runs',
      payload: 'graph=chain',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.statusCode).toBe(415);
    expect(json(text)).toMatchObject({
      error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('application/json') },
    });

    // Every route in the OpenAPI document works: no 501 placeholders are left.
    const openapi = json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>(
      await env.as(KEYS.acmeProducer, { method: 'GET', url: '/docs/json' }),
    );
    const stubs = Object.entries(openapi.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => '501' in (operation.responses ?? {}))
        .map(([method]) => `${method} ${path}`),
    );
    expect(stubs).toEqual([]);
  });

  it('serves /healthz and /readyz without a key, and to a key the OpenAPI document at /docs/json and a page at /docs', async () => {
    expect(json(await env.app.inject({ method: 'GET', url: '/healthz' }))).toEqual({ status: 'ok' });
    expect(json(await env.app.inject({ method: 'GET', url: '/readyz' }))).toEqual({ status: 'ready' });
    const page = await env.as(KEYS.acmeProducer, { method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const document = json<{
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: unknown; parameters?: { name: string }[] }>>;
      components: { securitySchemes: object };
    }>(await env.as(KEYS.acmeProducer, { method: 'GET', url: '/docs/json' }));
    expect(document.openapi).toMatch(/^3\./);
    for (const path of [
      '/v1/runs',
      '/v1/runs/{id}',
      '/v1/runs/{id}/messages',
      '/v1/runs/{id}/steps',
      '/v1/runs/{id}/events',
      '/v1/runs/{id}/retry',
      '/v1/runs/{id}/resume',
      '/healthz',
      '/readyz',
      '/metrics',
    ]) {
      expect(document.paths, path).toHaveProperty([path]);
    }
    expect(document.paths['/v1/runs']!.post!.requestBody).toBeDefined();
    expect(document.paths['/v1/runs']!.post!.parameters?.map((parameter) => parameter.name)).toContain(
      'idempotency-key',
    );
    expect(document.components.securitySchemes).toHaveProperty('apiKey');
    expect(Object.keys(document.paths).some((path) => path.startsWith('/admin'))).toBe(false);
  });
});
