import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { multipart } from '../helpers/multipart-body.js';
import {
  lintDocument,
  operationsOf,
  servedDocument,
  undeclaredAnswers,
  type OpenApiDocument,
  type OpenApiOperation,
  type ServedAnswer,
} from '../helpers/openapi-document.js';
import { eventually } from '../helpers/test-env.js';

/**
 * The OpenAPI document the API serves describes the API: Redocly's recommended rules pass, every
 * operation is named, and every answer a request gets — each operation called at least once, with each
 * media type the API serves — is declared by it.
 */
describe('the OpenAPI document at /docs/json', () => {
  const data = tempDirectory('agentq-openapi-');
  let env: ApiTestEnv;
  let document: OpenApiDocument;
  const answers: ServedAnswer[] = [];

  beforeAll(async () => {
    env = await startApiTestEnv({ env: { AGENTQ_DATA_DIR: data.path } });
    document = await servedDocument(env.app);
  });
  afterAll(async () => {
    await env.close();
    data.remove();
  });

  /** A request as a key's caller makes it, its answer recorded for the comparison with the document. */
  const call = async (key: string, options: InjectOptions): Promise<LightMyRequestResponse> => {
    const response = await env.as(key, options);
    const type = response.headers['content-type'];
    const sent = (options.headers as Record<string, string> | undefined)?.['content-type'];
    answers.push({
      requestType:
        options.payload === undefined ? null : sent === undefined ? 'application/json' : sent.split(';')[0]!.trim(),
      method: String(options.method),
      url: String(options.url),
      status: response.statusCode,
      mediaType:
        response.statusCode === 204 || response.rawPayload.length === 0 || typeof type !== 'string'
          ? null
          : type.split(';')[0]!.trim(),
    });
    return response;
  };
  const as = (method: InjectOptions['method'], url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    call(KEYS.acmeProducer, { method, url, headers, ...(payload === undefined ? {} : { payload: payload as string }) });
  const admin = (method: InjectOptions['method'], url: string, payload?: unknown) =>
    call(KEYS.acmeAdmin, { method, url, ...(payload === undefined ? {} : { payload: payload as string }) });

  it('passes Redocly lint with no errors; a document without servers does not (the linter runs)', async () => {
    const problems = await lintDocument(document, data.path);
    expect(problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    const { servers: _servers, ...serverless } = document;
    const broken = await lintDocument(serverless, data.path, 'serverless.json');
    expect(broken.filter((problem) => problem.severity === 'error').map((problem) => problem.ruleId)).toEqual([
      'no-empty-servers',
    ]);
  });

  it("declares the paged lists' cursor and limit, and the nextCursor and total of their answers", () => {
    for (const part of ['messages', 'steps']) {
      const operation = document.paths[`/v1/runs/{id}/${part}`]?.get as
        (OpenApiOperation & { parameters?: { name: string; in: string }[] }) | undefined;
      const query = (operation?.parameters ?? []).filter((parameter) => parameter.in === 'query');
      expect(query.map((parameter) => parameter.name).sort()).toEqual(['cursor', 'limit']);
      const schema = operation?.responses['200']?.content?.['application/json']?.schema as
        { properties?: Record<string, unknown>; required?: string[] } | undefined;
      expect(Object.keys(schema?.properties ?? {}).sort()).toEqual([part, 'nextCursor', 'total'].sort());
    }
  });

  it('names every operation, once; sets servers; types every body (no `{}` schema)', () => {
    const operations = operationsOf(document);
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.filter((entry) => !entry.operation.operationId).map((entry) => entry.key)).toEqual([]);
    const ids = operations.map((entry) => entry.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.servers?.length).toBeGreaterThan(0);
    const untyped: string[] = [];
    for (const { key, operation } of operations) {
      const bodies = [
        ...Object.entries(operation.requestBody?.content ?? {}).map(([type, media]) => [`request ${type}`, media]),
        ...Object.entries(operation.responses).flatMap(([status, answer]) =>
          Object.entries(answer.content ?? {}).map(([type, media]) => [`${status} ${type}`, media]),
        ),
      ] as [string, { schema?: Record<string, unknown> }][];
      for (const [where, media] of bodies) {
        const { description: _description, ...schema } = media.schema ?? {};
        if (Object.keys(schema).length === 0) untyped.push(`${key} ${where}`);
      }
    }
    expect(untyped).toEqual([]);
  });

  it('declares every answer the API serves: routes whose served responses the document does not declare: 0', async () => {
    // Runs: one that completes, and everything about it.
    const enqueued = json<{ id: string }>(
      await as('POST', '/v1/runs', { graph: 'chain', input: { steps: 1 }, conversationId: 'probe' }),
    );
    const run = await env.client.wait(enqueued.id, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    const id = run.id;
    await as('GET', '/v1/runs?limit=5');
    await as('GET', `/v1/runs/${id}`);
    for (const part of ['messages', 'result', 'steps', 'children', 'replay-report'])
      await as('GET', `/v1/runs/${id}/${part}`);
    // The paged lists: a page, the next, and a cursor the API did not hand out.
    for (const part of ['messages', 'steps']) {
      const page = json<{ nextCursor: string | null }>(await as('GET', `/v1/runs/${id}/${part}?limit=1`));
      if (page.nextCursor !== null) await as('GET', `/v1/runs/${id}/${part}?cursor=${page.nextCursor}&limit=1`);
      expect((await as('GET', `/v1/runs/${id}/${part}?cursor=x`)).statusCode).toBe(400);
    }
    const events = await as('GET', `/v1/runs/${id}/events`);
    expect(events.headers['content-type']).toMatch(/^text\/event-stream/);
    await as('POST', `/v1/runs/${id}/retry`);
    await as('POST', `/v1/runs/${id}/resume`, { value: 1 });
    await as('POST', `/v1/runs/${id}/fork`, { from: 0 });
    await as('POST', `/v1/runs/${id}/replay`, {});
    await as('POST', '/v1/runs/retry', { status: 'failed', dryRun: true });
    await as('POST', '/v1/runs/cancel', { status: ['queued', 'running'], dryRun: true });
    await as('POST', '/v1/runs/cancel', { status: 'completed' });
    await as('DELETE', `/v1/runs/${id}`);
    expect((await as('DELETE', `/v1/runs/${id}?purge=true`)).statusCode).toBe(204);
    // Chat: JSON and Server-Sent Events.
    await as('POST', '/v1/agent/chat', { query: 'Who drew the tower?' });
    await as('POST', '/v1/agent/chat', {
      query: 'Who drew the tower?',
      citations: true,
      sources: 'all',
      conversationId: 'probe-chat',
    });
    const stream = await as('POST', '/v1/agent/chat', { query: 'Who drew the tower?', stream: true });
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    // Documents: a multipart upload, indexed, then deleted (204).
    const upload = multipart({ collection: 'probe' }, [
      { name: 'tower.md', content: '# Tower\n\nKoechlin drew it.\n' },
    ]);
    const accepted = await call(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/documents',
      headers: upload.headers,
      payload: upload.payload,
    });
    expect(accepted.statusCode).toBe(202);
    const batchId = json<{ batchId: string }>(accepted).batchId;
    await eventually(
      async () => json<{ finished: boolean }>(await as('GET', `/v1/documents/batches/${batchId}`)).finished,
      20_000,
    );
    const listed = json<{ documents: { id: string }[] }>(await as('GET', '/v1/documents?collection=probe'));
    await as('GET', `/v1/documents/${listed.documents[0]!.id}`);
    await as('POST', '/v1/search', { query: 'tower', collection: 'probe' });
    await as('GET', '/v1/search?q=tower&collection=probe');
    await as('GET', '/v1/collections');
    await as('GET', '/v1/collections/probe');
    expect((await as('DELETE', `/v1/documents/${listed.documents[0]!.id}`)).statusCode).toBe(204);
    await as('DELETE', '/v1/documents?collection=probe');
    // Batches: JSON and JSON Lines in; the record, CSV and JSON Lines out.
    const batch = json<{ id: string }>(await as('POST', '/v1/batches', { questions: [{ question: 'Who?' }] }));
    await call(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: '{"question":"Who drew it?"}\n',
    });
    for (const format of ['json', 'csv', 'jsonl']) await as('GET', `/v1/batches/${batch.id}?format=${format}`);
    await as('DELETE', `/v1/batches/${batch.id}`);
    // The answer cache: cleared for a collection, for all, and a bad collection name (400).
    await as('DELETE', '/v1/answer-cache?collection=probe');
    await as('DELETE', '/v1/answer-cache');
    expect((await as('DELETE', '/v1/answer-cache?collection=a%20b')).statusCode).toBe(400);
    // Schedules, budgets, conversations, operations.
    const schedule = json<{ id: string }>(
      await as('POST', '/v1/schedules', { graph: 'chain', input: { steps: 1 }, everyMs: 3_600_000, paused: true }),
    );
    await as('GET', '/v1/schedules');
    await as('GET', `/v1/schedules/${schedule.id}`);
    await as('PATCH', `/v1/schedules/${schedule.id}`, { name: null });
    await as('GET', `/v1/schedules/${schedule.id}/runs`);
    expect((await as('DELETE', `/v1/schedules/${schedule.id}`)).statusCode).toBe(204);
    // Events: to a correlation key (kept for waits to come), and to a run the tenant does not have (404).
    expect((await as('POST', '/v1/events', { key: 'probe', name: 'paid', data: { n: 1 } })).statusCode).toBe(202);
    expect((await as('POST', '/v1/events', { runId: 'no-such-run', name: 'paid' })).statusCode).toBe(404);
    // A callback URL's route (no key needed): a token agentq did not sign.
    expect((await as('POST', '/v1/callbacks/not.signed', { approved: true })).statusCode).toBe(401);
    await admin('GET', '/v1/admin/tenants/acme/limits');
    await admin('PUT', '/v1/admin/tenants/acme/limits', {});
    // Graph rollouts: set, read, the three changes (promote and pause answer 409 with nothing ramping), remove.
    await admin('PUT', '/v1/graphs/chain/rollout', { current: '1' });
    await admin('GET', '/v1/graphs/chain/rollout');
    await admin('GET', '/v1/graphs/rollouts');
    expect((await admin('POST', '/v1/graphs/chain/rollout/promote')).statusCode).toBe(409);
    expect((await admin('POST', '/v1/graphs/chain/rollout/pause')).statusCode).toBe(409);
    await admin('POST', '/v1/graphs/chain/rollout/rollback', {});
    expect((await admin('DELETE', '/v1/graphs/chain/rollout')).statusCode).toBe(204);
    await as('GET', '/v1/usage');
    await as('GET', '/v1/conversations/probe');
    expect((await as('DELETE', '/v1/conversations/probe')).statusCode).toBe(204);
    await as('GET', '/healthz');
    await as('GET', '/readyz');
    const metrics = await admin('GET', '/metrics');
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);

    // Every operation of the document was called, so none is left unchecked.
    const called = new Set(
      answers.map((answer) => {
        const path = answer.url.split('?')[0]!;
        return operationsOf(document).find(
          (entry) =>
            entry.method === answer.method && new RegExp(`^${entry.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
        )?.key;
      }),
    );
    expect(
      operationsOf(document)
        .filter((entry) => !called.has(entry.key))
        .map((entry) => entry.key),
    ).toEqual([]);
    expect(undeclaredAnswers(document, answers)).toEqual([]);
    // The same answers against a document that declares only JSON: the comparison sees what is missing.
    const jsonOnly = JSON.parse(JSON.stringify(document)) as OpenApiDocument;
    for (const methods of Object.values(jsonOnly.paths))
      for (const operation of Object.values(methods))
        for (const answer of Object.values(operation.responses))
          answer.content = { 'application/json': { schema: { type: 'object' } } };
    expect(undeclaredAnswers(jsonOnly, answers).length).toBeGreaterThanOrEqual(9);
  });
});
