import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../../producer/api/auth/api-keys.js';
import { requireRole } from '../../producer/api/auth/authenticate.js';
import { notFound, sendApiError } from '../../producer/api/errors.js';
import { AuthThrottle } from '../../producer/api/limits/auth-throttle.js';
import { documentsRoutes } from '../../producer/api/routes/documents-routes.js';
import { searchRoutes } from '../../producer/api/routes/search-routes.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { makeDocx, DOCX_PARAGRAPHS, tempDirectory } from '../helpers/ingest-fixtures.js';
import { multipart } from '../helpers/multipart-body.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef01';

describe('HTTP routes for documents and search (on a fastify instance of their own)', () => {
  const data = tempDirectory();
  let env: TestEnv;
  let app: FastifyInstance;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_DATA_DIR: data.path, AGENTQ_INGEST_MAX_BYTES: '65536' } });
    const apiKeys = ApiKeys.of([
      { key: ALICE, tenant: 'alice', role: 'producer' },
      { key: BOB, tenant: 'bob', role: 'producer' },
    ]);
    const server = Fastify().withTypeProvider<ZodTypeProvider>();
    server.setValidatorCompiler(validatorCompiler);
    server.setSerializerCompiler(serializerCompiler);
    server.decorateRequest('principal', null);
    server.setErrorHandler((error, _request, reply) => sendApiError(reply, error));
    server.setNotFoundHandler(notFound);
    await server.register(async (v1) => {
      const throttle = new AuthThrottle(
        env.client.store.redis,
        env.client.store.keys,
        env.config.authFailuresPerMinute,
      );
      v1.addHook('onRequest', requireRole({ apiKeys, defaultTenant: env.config.tenant, throttle }, 'producer'));
      await v1.register(documentsRoutes({ config: env.config }));
      await v1.register(searchRoutes({ config: env.config }));
    });
    await server.ready();
    app = server;
  });
  afterAll(async () => {
    await app.close();
    await env.close();
    data.remove();
  });

  const waitIndexed = async (key: string, batchId: string) => {
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const response = await app.inject({ method: 'GET', url: `/v1/documents/batches/${batchId}`, headers: as(key) });
      if (response.json().finished) return response.json();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`batch ${batchId} did not finish`);
  };

  it('uploads, lists, searches and deletes a tenant’s documents', async () => {
    const upload = multipart({ collection: 'handbook' }, [
      { name: 'policies.md', content: '# Policies\n\nEmployees may bring a ferret to the office on Fridays.\n' },
      { name: 'memo.docx', content: makeDocx(DOCX_PARAGRAPHS) },
      { name: 'broken.pdf', content: '%PDF-1.4 this is not really a pdf' },
    ]);
    const accepted = await app.inject({
      method: 'POST',
      url: '/v1/documents',
      headers: { ...as(ALICE), ...upload.headers },
      payload: upload.payload,
    });
    expect(accepted.statusCode).toBe(202);
    const batch = accepted.json();
    expect(accepted.headers.location).toBe(`/v1/documents/batches/${batch.batchId}`);
    expect(batch).toMatchObject({ tenant: 'alice', collection: 'handbook', total: 3 });

    const progress = await waitIndexed(ALICE, batch.batchId);
    expect(progress).toMatchObject({ total: 3, done: 2, failed: 1, finished: true });
    expect(progress.documents.find((document: { path: string }) => document.path === 'broken.pdf')).toMatchObject({
      status: 'failed',
      error: { code: 'PARSE_ERROR' },
    });

    const list = await app.inject({ method: 'GET', url: '/v1/documents?collection=handbook', headers: as(ALICE) });
    expect(list.statusCode).toBe(200);
    const documents = list.json().documents as { id: string; path: string; status: string; chunkCount: number }[];
    expect(documents.map((document) => [document.path, document.status]).sort()).toEqual([
      ['broken.pdf', 'failed'],
      ['memo.docx', 'indexed'],
      ['policies.md', 'indexed'],
    ]);
    const failedOnly = await app.inject({ method: 'GET', url: '/v1/documents?status=failed', headers: as(ALICE) });
    expect(failedOnly.json().documents.map((document: { path: string }) => document.path)).toEqual(['broken.pdf']);

    const search = await app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: as(ALICE),
      payload: { query: 'can I bring my ferret?', collection: 'handbook', k: 3 },
    });
    expect(search.statusCode).toBe(200);
    const [hit] = search.json().hits;
    expect(hit).toMatchObject({
      title: 'Policies',
      path: 'policies.md',
      page: null,
      headingPath: ['Policies'],
      collection: 'handbook',
    });
    expect(hit.score).toBeGreaterThan(0);

    const policies = documents.find((document) => document.path === 'policies.md')!;
    const one = await app.inject({ method: 'GET', url: `/v1/documents/${policies.id}`, headers: as(ALICE) });
    expect(one.json()).toMatchObject({ id: policies.id, status: 'indexed', chunkCount: 1, type: 'markdown' });

    const deleted = await app.inject({ method: 'DELETE', url: `/v1/documents/${policies.id}`, headers: as(ALICE) });
    expect(deleted.statusCode).toBe(204);
    const after = await app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: as(ALICE),
      payload: { query: 'ferret' },
    });
    expect(after.json().hits).toEqual([]);
    expect(
      (await app.inject({ method: 'GET', url: `/v1/documents/${policies.id}`, headers: as(ALICE) })).statusCode,
    ).toBe(404);
  });

  it('scopes everything to the caller’s tenant: another tenant’s document id answers 404, exactly as a missing one', async () => {
    const upload = multipart({}, [
      { name: 'secret.md', content: '# Secret\n\nThe vault code mentions a wolverine.\n' },
    ]);
    const batch = (
      await app.inject({
        method: 'POST',
        url: '/v1/documents',
        headers: { ...as(ALICE), ...upload.headers },
        payload: upload.payload,
      })
    ).json();
    const progress = await waitIndexed(ALICE, batch.batchId);
    const docId = progress.documents[0].docId as string;

    const foreign = await app.inject({ method: 'GET', url: `/v1/documents/${docId}`, headers: as(BOB) });
    const missing = await app.inject({
      method: 'GET',
      url: '/v1/documents/doc_00000000000000000000000000000000',
      headers: as(BOB),
    });
    expect(foreign.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe(missing.json().error.code);
    expect((await app.inject({ method: 'DELETE', url: `/v1/documents/${docId}`, headers: as(BOB) })).statusCode).toBe(
      404,
    );
    expect(
      (await app.inject({ method: 'GET', url: `/v1/documents/batches/${batch.batchId}`, headers: as(BOB) })).statusCode,
    ).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/v1/documents', headers: as(BOB) })).json().documents).toEqual([]);
    expect(
      (
        await app.inject({ method: 'POST', url: '/v1/search', headers: as(BOB), payload: { query: 'wolverine vault' } })
      ).json().hits,
    ).toEqual([]);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/search',
          headers: as(ALICE),
          payload: { query: 'wolverine vault' },
        })
      ).json().hits,
    ).toHaveLength(1);
    // Alice's document still exists after Bob's delete attempt.
    expect((await app.inject({ method: 'GET', url: `/v1/documents/${docId}`, headers: as(ALICE) })).statusCode).toBe(
      200,
    );
  });

  it('answers bad requests with a 4xx and the error shape', async () => {
    const noKey = await app.inject({ method: 'POST', url: '/v1/search', payload: { query: 'x' } });
    expect(noKey.statusCode).toBe(401);
    const json = await app.inject({ method: 'POST', url: '/v1/documents', headers: as(ALICE), payload: { file: 'x' } });
    expect(json.statusCode).toBe(415);
    expect(json.json().error.message).toMatch(/multipart/);
    const empty = multipart({ collection: 'c' }, []);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/documents',
          headers: { ...as(ALICE), ...empty.headers },
          payload: empty.payload,
        })
      ).json().error.code,
    ).toBe('INVALID_INPUT');
    const badCollection = multipart({ collection: 'no spaces allowed' }, [{ name: 'a.md', content: 'x' }]);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/documents',
          headers: { ...as(ALICE), ...badCollection.headers },
          payload: badCollection.payload,
        })
      ).statusCode,
    ).toBe(400);
    const tooLarge = multipart({}, [{ name: 'big.txt', content: 'a'.repeat(70_000) }]);
    const large = await app.inject({
      method: 'POST',
      url: '/v1/documents',
      headers: { ...as(ALICE), ...tooLarge.headers },
      payload: tooLarge.payload,
    });
    expect(large.statusCode).toBe(413);
    const emptyQuery = await app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: as(ALICE),
      payload: { query: '   ' },
    });
    expect(emptyQuery.statusCode).toBe(400);
    expect(emptyQuery.json().error.code).toBe('INVALID_INPUT');
    const badK = await app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: as(ALICE),
      payload: { query: 'x', k: 0 },
    });
    expect(badK.statusCode).toBe(400);
    const hostile = await app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: as(ALICE),
      payload: { query: '"NEAR( AND * :' },
    });
    expect(hostile.statusCode).toBe(200);
  });

  it("GET /v1/search takes the query string, and DELETE /v1/documents?collection= deletes one tenant's collection only", async () => {
    const upload = (key: string, collection: string, name: string, text: string) => {
      const body = multipart({ collection }, [{ name, content: text }]);
      return app.inject({
        method: 'POST',
        url: '/v1/documents',
        headers: { ...as(key), ...body.headers },
        payload: body.payload,
      });
    };
    const aliceOne = await upload(ALICE, 'bulk', 'one.md', '# One\n\nThe okapi sleeps in the bulk collection.\n');
    const aliceTwo = await upload(ALICE, 'bulk', 'two.md', '# Two\n\nAnother okapi note in the bulk collection.\n');
    const aliceKept = await upload(ALICE, 'kept', 'kept.md', '# Kept\n\nAn okapi that stays.\n');
    const bobSame = await upload(BOB, 'bulk', 'one.md', '# Bob\n\nBob also writes about the okapi.\n');
    for (const [key, response] of [
      [ALICE, aliceOne],
      [ALICE, aliceTwo],
      [ALICE, aliceKept],
      [BOB, bobSame],
    ] as const)
      await waitIndexed(key, response.json().batchId);

    const viaGet = await app.inject({
      method: 'GET',
      url: '/v1/search?query=okapi&collection=bulk&k=5',
      headers: as(ALICE),
    });
    expect(viaGet.statusCode, viaGet.body).toBe(200);
    const viaPost = await app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: as(ALICE),
      payload: { query: 'okapi', collection: 'bulk', k: 5 },
    });
    expect(viaGet.json()).toEqual(viaPost.json());
    expect(
      viaGet
        .json()
        .hits.map((hit: { path: string }) => hit.path)
        .sort(),
    ).toEqual(['one.md', 'two.md']);
    const badK = await app.inject({ method: 'GET', url: '/v1/search?query=okapi&k=0', headers: as(ALICE) });
    expect(badK.statusCode).toBe(400);
    expect(badK.json().error.message).toMatch(/querystring\.k/);
    const noQuery = await app.inject({ method: 'GET', url: '/v1/search', headers: as(ALICE) });
    expect(noQuery.statusCode).toBe(400);

    const noCollection = await app.inject({ method: 'DELETE', url: '/v1/documents', headers: as(ALICE) });
    expect(noCollection.statusCode).toBe(400);
    expect(noCollection.json().error.message).toMatch(/collection is required/);
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/documents?collection=bulk', headers: as(ALICE) });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ collection: 'bulk', deleted: 2 });
    const aliceLeft = await app.inject({ method: 'GET', url: '/v1/documents', headers: as(ALICE) });
    const collections = aliceLeft.json().documents.map((document: { collection: string }) => document.collection);
    expect(collections).toContain('kept');
    expect(collections).not.toContain('bulk');
    expect(
      (await app.inject({ method: 'GET', url: '/v1/search?query=okapi&collection=bulk', headers: as(ALICE) })).json()
        .hits,
    ).toEqual([]);
    // Bob's collection of the same name is untouched.
    const bobLeft = await app.inject({
      method: 'GET',
      url: '/v1/search?query=okapi&collection=bulk',
      headers: as(BOB),
    });
    expect(bobLeft.json().hits).toHaveLength(1);
    expect(
      (await app.inject({ method: 'DELETE', url: '/v1/documents?collection=bulk', headers: as(ALICE) })).json(),
    ).toEqual({ collection: 'bulk', deleted: 0 });
  });

  it('GET /v1/collections and /v1/collections/:name: the caller’s collections, chunks and vector progress', async () => {
    const body = multipart({ collection: 'shelf' }, [
      { name: 'heron.md', content: '# Heron\n\nThe heron waits in the shallows.\n' },
      { name: 'egret.md', content: '# Egret\n\nThe egret walks the marsh.\n' },
    ]);
    const uploaded = await app.inject({
      method: 'POST',
      url: '/v1/documents',
      headers: { ...as(BOB), ...body.headers },
      payload: body.payload,
    });
    await waitIndexed(BOB, uploaded.json().batchId);
    const one = await app.inject({ method: 'GET', url: '/v1/collections/shelf', headers: as(BOB) });
    expect(one.statusCode, one.body).toBe(200);
    // No embedder in this environment: lexical, so no vectors to wait for.
    expect(one.json()).toEqual({ name: 'shelf', chunks: 2, dimensions: null, vectors: null });
    const all = await app.inject({ method: 'GET', url: '/v1/collections', headers: as(BOB) });
    expect(all.json().collections).toContainEqual(one.json());
    // Another tenant's collection answers as a missing one.
    const foreign = await app.inject({ method: 'GET', url: '/v1/collections/shelf', headers: as(ALICE) });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('NOT_FOUND');
    expect(
      (await app.inject({ method: 'GET', url: '/v1/collections', headers: as(ALICE) })).json().collections,
    ).not.toContainEqual(expect.objectContaining({ name: 'shelf' }));
    const bad = await app.inject({ method: 'GET', url: '/v1/collections/a%20b', headers: as(BOB) });
    expect(bad.statusCode).toBe(400);
  });
});
