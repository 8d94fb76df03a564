import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';

interface BatchBody {
  id: string;
  status: string;
  progress: Record<string, number>;
  results?: { id: string; answer: string | null; status: string }[];
}

describe('HTTP API: batches', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [echoRagGraph()] });
  });
  afterAll(async () => env.close());

  const finished = (id: string, key: string = KEYS.acmeProducer) =>
    eventually(async () => {
      const body = json<BatchBody>(await env.as(key, { method: 'GET', url: `/v1/batches/${id}` }));
      return body.status !== 'running' && body;
    }, 20_000);

  it('POST a batch, poll its progress, get its results as JSON, CSV and JSON Lines', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      headers: { 'idempotency-key': 'batch-a' },
      payload: {
        collection: 'docs',
        questions: [{ id: 'q1', question: 'first' }, { question: 'second' }],
        options: { concurrency: 2, graph: 'echo-rag' },
      },
    });
    expect(created.statusCode).toBe(202);
    const batch = json<BatchBody>(created);
    expect(batch.progress.total).toBe(2);
    const done = await finished(batch.id);
    expect(done.status).toBe('completed');
    expect(done.results?.map((result) => [result.id, result.answer])).toEqual([
      ['q1', 'echo: first'],
      ['2', 'echo: second'],
    ]);
    const csv = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batch.id}?format=csv` });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.body.split('\r\n')[1]).toMatch(/^q1,first,completed,echo: first,/);
    const lines = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batch.id}?format=jsonl` });
    expect(
      lines.body
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).answer),
    ).toEqual(['echo: first', 'echo: second']);
    const replay = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      headers: { 'idempotency-key': 'batch-a' },
      payload: {
        collection: 'docs',
        questions: [{ id: 'q1', question: 'first' }, { question: 'second' }],
        options: { concurrency: 2, graph: 'echo-rag' },
      },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json<BatchBody>(replay).id).toBe(batch.id);
  });

  it('accepts a JSON Lines upload with the collection in the query', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches?collection=docs&concurrency=1&graph=echo-rag',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: '{"id":"a","question":"alpha"}\n{"id":"b","question":"beta"}\n',
    });
    expect(created.statusCode).toBe(202);
    const done = await finished(json<BatchBody>(created).id);
    expect(done.results?.map((result) => result.answer)).toEqual(['echo: alpha', 'echo: beta']);
    const bad = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: 'not json\n',
    });
    expect(bad.statusCode).toBe(400);
    expect(json<{ error: { message: string } }>(bad).error.message).toMatch(/the JSONL upload: line 1 is not JSON/);
  });

  it('a JSONL upload takes the same file as `agentq batch FILE`: `query` for `question`, other keys ignored', async () => {
    // An eval file's lines carry more than the question (expected answers, tags): the CLI always took them.
    const file =
      '{"id":"e1","question":"gamma","expected":"G","tags":["x"]}\n\n{"id":2,"query":"delta","answer":"D"}\n';
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches?graph=echo-rag',
      headers: { 'content-type': 'application/jsonl' },
      payload: file,
    });
    expect(created.statusCode, created.body).toBe(202);
    const done = await finished(json<BatchBody>(created).id);
    expect(done.results?.map((result) => [result.id, result.answer])).toEqual([
      ['e1', 'echo: gamma'],
      ['2', 'echo: delta'],
    ]);
    const noQuestion = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: '{"id":"x","expected":"y"}\n',
    });
    expect(noQuestion.statusCode).toBe(400);
    expect(json<{ error: { message: string } }>(noQuestion).error.message).toMatch(/line 1 has no "question" string/);
  });

  it('another tenant gets 404 for a batch, exactly like a missing one; DELETE cancels', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: {
        questions: Array.from({ length: 6 }, (_, index) => ({ question: `slow ${index}` })),
        options: { concurrency: 1, graph: 'echo-rag' },
      },
    });
    const { id } = json<BatchBody>(created);
    const foreign = await env.as(KEYS.globexProducer, { method: 'GET', url: `/v1/batches/${id}` });
    const missing = await env.as(KEYS.globexProducer, { method: 'GET', url: '/v1/batches/bat_nope' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body.replace(id, 'X')).toBe(missing.body.replace('bat_nope', 'X'));
    expect((await env.as(KEYS.globexProducer, { method: 'DELETE', url: `/v1/batches/${id}` })).statusCode).toBe(404);
    const cancelled = await env.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/batches/${id}` });
    expect(json<BatchBody>(cancelled).status).toBe('cancelled');
    const done = await finished(id);
    expect(done.progress.cancelled).toBeGreaterThanOrEqual(4);
  });

  it('rejects an invalid batch with the field named', async () => {
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: { questions: [] },
    });
    expect(response.statusCode).toBe(400);
    expect(json<{ error: { message: string } }>(response).error.message).toMatch(/questions/);
  });
});
