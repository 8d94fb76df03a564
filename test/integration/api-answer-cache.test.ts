import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { citeBestPassage } from '../helpers/cite-best-passage.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { eventually } from '../helpers/test-env.js';

interface BatchBody {
  id: string;
  status: string;
  results?: { runId: string; status: string; answer: string | null; cached?: { from: string; at: string } }[];
}

/** The answer cache over HTTP: `answerCache` on `POST /v1/batches`, the `cached` marks, `DELETE /v1/answer-cache`. */
describe('HTTP API: answer cache', () => {
  const data = tempDirectory('agentq-api-answer-cache-');
  let rag: RagTestEnv<ApiTestEnv>;
  let env: ApiTestEnv;

  beforeAll(async () => {
    rag = await startRagTestEnv(startApiTestEnv, data.path, { model: { script: citeBestPassage } });
    ({ env } = rag);
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris', tenant: 'acme' });
  }, 120_000);
  afterAll(async () => {
    await rag?.close();
    data.remove();
  });

  const questions = [{ question: 'Where is Buhl?' }, { question: 'When did the spire of Notre-Dame collapse?' }];

  async function batch(payload: Record<string, unknown>): Promise<NonNullable<BatchBody['results']>> {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: { collection: 'paris', questions, ...payload },
    });
    expect(created.statusCode, created.body).toBe(202);
    const { id } = json<BatchBody>(created);
    const done = await eventually(async () => {
      const body = json<BatchBody>(await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${id}` }));
      return body.status !== 'running' && body;
    }, 30_000);
    expect(done.results!.map((result) => result.status)).toEqual(['completed', 'completed']);
    return done.results!;
  }

  it('a batch asked twice with answerCache: the second is answered from the cache, marked in its results and run records; DELETE clears it', async () => {
    const first = await batch({ answerCache: true });
    expect(first.every((result) => result.cached === undefined)).toBe(true);
    const calls = rag.server!.chatRequests().length;
    const second = await batch({ answerCache: true });
    expect(rag.server!.chatRequests().length).toBe(calls);
    expect(second.map((result) => result.cached?.from)).toEqual(first.map((result) => result.runId));
    expect(second.map((result) => result.answer)).toEqual(first.map((result) => result.answer));
    const run = json<{ cached?: { from: string; at: string } }>(
      await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${second[0]!.runId}` }),
    );
    expect(run.cached).toEqual(second[0]!.cached);

    const cleared = await env.as(KEYS.acmeProducer, { method: 'DELETE', url: '/v1/answer-cache?collection=paris' });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(json(cleared)).toEqual({ cleared: 'collection', collection: 'paris' });
    const third = await batch({ answerCache: true });
    expect(third.every((result) => result.cached === undefined)).toBe(true);
    expect(rag.server!.chatRequests().length).toBe(calls + 2 * questions.length);

    const all = await env.as(KEYS.acmeProducer, { method: 'DELETE', url: '/v1/answer-cache' });
    expect(json(all)).toEqual({ cleared: 'all' });
    const invalid = await env.as(KEYS.acmeProducer, { method: 'DELETE', url: '/v1/answer-cache?collection=a%20b' });
    expect(invalid.statusCode).toBe(400);
  });

  it('a run of POST /v1/runs asks with answer_cache in its rag-agent input', async () => {
    await batch({ answerCache: true });
    const calls = rag.server!.chatRequests().length;
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'rag-agent', input: { query: 'where is buhl', collection: 'paris', answer_cache: true } },
    });
    expect(created.statusCode, created.body).toBe(202);
    const { id } = json<{ id: string }>(created);
    const run = await eventually(async () => {
      const body = json<{ status: string; cached?: unknown }>(
        await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${id}` }),
      );
      return body.status === 'completed' && body;
    }, 30_000);
    expect(run.cached).toEqual({ from: expect.any(String), at: expect.any(String) });
    expect(rag.server!.chatRequests().length).toBe(calls);
  });

  it('POST /v1/agent/chat takes answer_cache as every rag-agent input does: a question answered before costs no model call', async () => {
    const [answered] = await batch({ answerCache: true });
    const calls = rag.server!.chatRequests().length;
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: 'Where is Buhl', collection: 'paris', answer_cache: true },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(json<{ answer: string }>(response).answer).toBe(answered!.answer);
    expect(rag.server!.chatRequests().length).toBe(calls);
  });
});
