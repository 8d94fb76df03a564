import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { Bm25SparseEncoder } from '../../shared/retrieval/bm25-sparse-encoder.js';
import { bm25TokenId } from '../../shared/retrieval/murmur-hash3.js';
import { qdrantPointId } from '../../shared/adapters/qdrant/qdrant-point-id.js';
import { QdrantVectorStore } from '../../shared/adapters/qdrant/qdrant-vector-store.js';
import { failure, ok, QdrantFakeServer, type RecordedRequest } from '../fakes/qdrant-fake-server.js';

/**
 * Request-level tests: the adapter against a fake Qdrant on loopback that records every request and
 * answers with the shapes of Qdrant's REST documentation. Each test states which documented request
 * the adapter's request must look like. (The contract suite runs against a real Qdrant when QDRANT_URL
 * is set: test/contract/qdrant-vector-store.test.ts.)
 */

const CHUNKS = '/collections/agentq_chunks';
const REGISTRY = '/collections/agentq_collections';
const WITH_PAYLOAD = ['collection', 'record_id', 'text', 'payload'];
const encoder = new Bm25SparseEncoder();
const tenantIs = (tenant: string) => ({ key: 'tenant', match: { value: tenant } });
const collectionIs = (collection: string) => ({ key: 'collection', match: { value: collection } });
const lines = (requests: readonly RecordedRequest[]) => requests.map((request) => `${request.method} ${request.path}`);

let server: QdrantFakeServer;
let store: QdrantVectorStore;

beforeEach(async () => {
  server = await QdrantFakeServer.start();
  store = new QdrantVectorStore({ url: server.url, retry: { retryDelayMs: 1 } });
});
afterEach(async () => {
  await store.close();
  await server.close();
});

/** The server as agentq leaves it after a first run: both collections, every index, these dense lengths. */
function prepared(denseLengths: number[] = []): void {
  server.addCollection(
    'agentq_chunks',
    Object.fromEntries(denseLengths.map((length) => [`dense-${length}`, { size: length, distance: 'Cosine' }])),
    { bm25: { modifier: 'idf' } },
    ['tenant', 'collection', 'payload.docId', 'payload.contentHash'],
  );
  server.addCollection('agentq_collections', {}, {}, ['tenant', 'collection']);
}

/** What the registry scroll returns for an existing agentq collection. */
function registryPoint(tenant: string, collection: string, dimensions: number | null) {
  return {
    id: qdrantPointId([tenant, collection]),
    payload: { tenant, collection, dimensions, created_at: '2026-01-01T00:00:00.000Z' },
  };
}

/** After setup: the requests of the calls under test only. */
async function settled(): Promise<void> {
  await store.count('acme');
  server.requests.length = 0;
}

async function expectCode(promise: Promise<unknown>, code: string, message?: RegExp): Promise<AgentqError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(AgentqError.isInstance(error), `expected AgentqError ${code}, got ${String(error)}`).toBe(true);
  expect((error as AgentqError).code).toBe(code);
  if (message) expect((error as AgentqError).message).toMatch(message);
  return error as AgentqError;
}

describe('QdrantVectorStore: setting up Qdrant', () => {
  it('creates the chunks collection with a named cosine dense vector and the BM25 sparse vector with the idf modifier', async () => {
    await store.upsert('acme', 'docs', [{ id: 'a', text: 'The zebra runs.', vector: [1, 0, 0] }]);
    const [create] = server.requestsTo(/^\/collections\/agentq_chunks$/, 'PUT');
    // Documented: PUT /collections/{name} {"vectors": {"dense": {"size": 384, "distance": "Cosine"}}, "sparse_vectors": {"sparse": {"modifier": "idf"}}}
    expect(create!.body).toEqual({
      vectors: { 'dense-3': { size: 3, distance: 'Cosine' } },
      sparse_vectors: { bm25: { modifier: 'idf' } },
    });
    // The registry holds payload only: a collection without vector storage.
    expect(server.requestsTo(/^\/collections\/agentq_collections$/, 'PUT')[0]!.body).toEqual({ vectors: {} });
  });

  it('creates a sparse-only chunks collection when the first records have no vectors', async () => {
    await store.ensureCollection('acme', 'docs');
    expect(server.requestsTo(/^\/collections\/agentq_chunks$/, 'PUT')[0]!.body).toEqual({
      vectors: {},
      sparse_vectors: { bm25: { modifier: 'idf' } },
    });
  });

  it('creates payload indexes for every filtered field, the tenant as a keyword index with is_tenant', async () => {
    await store.ensureCollection('acme', 'docs');
    const indexes = (path: RegExp) =>
      server.requestsTo(path, 'PUT').map((request) => ({ query: request.query, body: request.body }));
    // Documented: PUT /collections/{name}/index {"field_name": "group_id", "field_schema": {"type": "keyword", "is_tenant": true}}
    expect(indexes(/^\/collections\/agentq_chunks\/index$/)).toEqual([
      { query: { wait: 'true' }, body: { field_name: 'tenant', field_schema: { type: 'keyword', is_tenant: true } } },
      { query: { wait: 'true' }, body: { field_name: 'collection', field_schema: 'keyword' } },
      { query: { wait: 'true' }, body: { field_name: 'payload.docId', field_schema: 'keyword' } },
      { query: { wait: 'true' }, body: { field_name: 'payload.contentHash', field_schema: 'keyword' } },
    ]);
    expect(indexes(/^\/collections\/agentq_collections\/index$/)).toEqual([
      { query: { wait: 'true' }, body: { field_name: 'tenant', field_schema: { type: 'keyword', is_tenant: true } } },
      { query: { wait: 'true' }, body: { field_name: 'collection', field_schema: 'keyword' } },
    ]);
  });

  it('sets up once per process, then sends only the requests of each call', async () => {
    await store.ensureCollection('acme', 'docs');
    expect(lines(server.requests.slice(0, 4))).toEqual(['GET /', `GET ${CHUNKS}`, `PUT ${CHUNKS}`, `GET ${CHUNKS}`]);
    server.requests.length = 0;
    await store.count('acme');
    expect(lines(server.requests)).toEqual([`POST ${CHUNKS}/points/count`]);
  });

  it('leaves an existing layout as it is and only adds missing indexes', async () => {
    prepared();
    server.collections.get('agentq_chunks')!.payload_schema = { tenant: { data_type: 'keyword' } };
    await store.count('acme');
    expect(lines(server.requests.filter((request) => request.method === 'PUT'))).toEqual([
      `PUT ${CHUNKS}/index`,
      `PUT ${CHUNKS}/index`,
      `PUT ${CHUNKS}/index`,
    ]);
  });

  it('treats another worker creating the collection at the same moment as success', async () => {
    server.answer('PUT', CHUNKS, (request) => {
      server.addCollection(
        'agentq_chunks',
        {},
        (request.body as { sparse_vectors: Record<string, unknown> }).sparse_vectors,
      );
      return failure(409, 'Wrong input: Collection `agentq_chunks` already exists!');
    });
    await store.ensureCollection('acme', 'docs');
    expect(server.collections.has('agentq_collections')).toBe(true);
  });

  it('adds a dense vector of a new length to the existing collection (Qdrant 1.18 vector schema API)', async () => {
    prepared([3]);
    await store.upsert('acme', 'small-model', [{ id: 'a', text: 'x', vector: [1, 0, 0, 0, 0] }]);
    const [add] = server.requestsTo(/^\/collections\/agentq_chunks\/vectors\//, 'PUT');
    // Documented: PUT /collections/{name}/vectors/{vector_name} {"dense": {"size": 256, "distance": "Cosine"}}
    expect(add!.path).toBe(`${CHUNKS}/vectors/dense-5`);
    expect(add!.body).toEqual({ dense: { size: 5, distance: 'Cosine' } });
    await store.upsert('acme', 'small-model', [{ id: 'b', text: 'y', vector: [0, 1, 0, 0, 0] }]);
    expect(server.requestsTo(/\/vectors\//, 'PUT')).toHaveLength(1);
  });

  it('re-creates its collections after someone removed them (the failing call is retryable)', async () => {
    prepared();
    await settled();
    server.collections.clear();
    const error = await expectCode(store.count('acme'), 'UNAVAILABLE', /re-created on the next call/);
    expect(error.retryable).toBe(true);
    await store.count('acme');
    expect(server.collections.has('agentq_chunks')).toBe(true);
    expect(server.collections.has('agentq_collections')).toBe(true);
  });

  it('refuses a Qdrant older than 1.16 with a message naming its version, and one it did not lay out', async () => {
    server.version = '1.12.3';
    await expectCode(store.count('acme'), 'UNAVAILABLE', /1\.12\.3 .* too old: agentq needs Qdrant 1\.16/);
    server.version = '1.18.0';
    server.addCollection('agentq_chunks', { '': { size: 4, distance: 'Dot' } });
    await expectCode(store.count('acme'), 'INTERNAL', /AGENTQ_QDRANT_COLLECTION_PREFIX/);
  });

  it('sends the API key as the api-key header on every request', async () => {
    const keyed = new QdrantVectorStore({ url: server.url, apiKey: 'secret-key' });
    await keyed.ensureCollection('acme', 'docs');
    expect(server.requests.length).toBeGreaterThan(5);
    for (const request of server.requests) expect(request.headers['api-key']).toBe('secret-key');
  });
});

describe('QdrantVectorStore: writing', () => {
  it('upserts points with UUIDv5 ids, BM25 sparse weights of context + text, the dense vector and the payload', async () => {
    prepared([3]);
    await store.upsert('acme', 'docs', [
      {
        id: 'doc_1.c0',
        text: 'The zebra runs.',
        context: 'Zebras',
        vector: [1, 0, 0],
        payload: { docId: 'doc_1', page: 1 },
      },
    ]);
    const [upsert] = server.requestsTo(/^\/collections\/agentq_chunks\/points$/, 'PUT');
    expect(upsert!.query).toEqual({ wait: 'true' });
    // Documented: PUT /collections/{name}/points {"points": [{"id": …, "vector": {"text": {"indices": […], "values": […]}}, "payload": {…}}]}
    expect(upsert!.body).toEqual({
      points: [
        {
          id: qdrantPointId(['acme', 'docs', 'doc_1.c0']),
          vector: { bm25: encoder.encodeDocument('Zebras\nThe zebra runs.'), 'dense-3': [1, 0, 0] },
          payload: {
            tenant: 'acme',
            collection: 'docs',
            record_id: 'doc_1.c0',
            text: 'The zebra runs.',
            context: 'Zebras',
            payload: { docId: 'doc_1', page: 1 },
          },
        },
      ],
    });
    const sparse = (upsert!.body as { points: { vector: { bm25: { indices: number[] } } }[] }).points[0]!.vector.bm25;
    expect(sparse.indices).toEqual([bm25TokenId('zebra'), bm25TokenId('run')]);
  });

  it('registers a new collection with its vector length before writing its points', async () => {
    prepared([3]);
    await store.upsert('acme', 'docs', [{ id: 'a', text: 'x', vector: [1, 0, 0] }]);
    expect(lines(server.requests.slice(-3))).toEqual([
      `POST ${REGISTRY}/points/scroll`,
      `PUT ${REGISTRY}/points`,
      `PUT ${CHUNKS}/points`,
    ]);
    const [lookup] = server.requestsTo(/\/agentq_collections\/points\/scroll$/);
    expect(lookup!.body).toEqual({
      filter: { must: [tenantIs('acme'), collectionIs('docs')] },
      limit: 1,
      with_payload: true,
      with_vector: false,
    });
    expect(server.requestsTo(/\/agentq_collections\/points$/, 'PUT')[0]!.body).toEqual({
      points: [
        {
          id: qdrantPointId(['acme', 'docs']),
          vector: {},
          payload: { tenant: 'acme', collection: 'docs', dimensions: 3, created_at: expect.any(String) },
        },
      ],
    });
  });

  it('sends large upserts in batches of 256 points', async () => {
    prepared();
    await store.upsert(
      'acme',
      'docs',
      Array.from({ length: 600 }, (_, index) => ({ id: `r${index}`, text: `lemur ${index}` })),
    );
    const batches = server
      .requestsTo(/^\/collections\/agentq_chunks\/points$/, 'PUT')
      .map((request) => (request.body as { points: unknown[] }).points.length);
    expect(batches).toEqual([256, 256, 88]);
  });

  it('retries 5xx answers and dropped connections, but not a request Qdrant refused', async () => {
    prepared();
    await settled();
    server.answer('PUT', `${CHUNKS}/points`, failure(503, 'Service Unavailable: shard is loading'), 'drop-connection');
    await store.upsert('acme', 'docs', [{ id: 'a', text: 'zebra' }]);
    expect(server.requestsTo(/^\/collections\/agentq_chunks\/points$/, 'PUT')).toHaveLength(3);

    server.requests.length = 0;
    server.answer(
      'PUT',
      `${CHUNKS}/points`,
      failure(400, 'Wrong input: Vector dimension error: expected dim: 3, got 4'),
    );
    const error = await expectCode(
      store.upsert('acme', 'docs', [{ id: 'b', text: 'zebra' }]),
      'INTERNAL',
      /Vector dimension error/,
    );
    expect(error.retryable).toBe(false);
    expect(server.requestsTo(/^\/collections\/agentq_chunks\/points$/, 'PUT')).toHaveLength(1);
  });

  it('gives up after the last attempt with a retryable error naming the operation', async () => {
    prepared();
    await settled();
    server.answer('POST', `${CHUNKS}/points/count`, ...Array.from({ length: 4 }, () => failure(502, 'Bad Gateway')));
    const error = await expectCode(store.count('acme'), 'UNAVAILABLE', /count records.*HTTP 502/);
    expect(error.retryable).toBe(true);
  });

  it('refuses another vector length for a collection before writing anything (CONFLICT up front, INVALID_INPUT on upsert)', async () => {
    prepared([3]);
    await settled();
    server.answer(
      'POST',
      `${REGISTRY}/points/scroll`,
      ok({ points: [registryPoint('acme', 'docs', 3)], next_page_offset: null }),
      ok({ points: [registryPoint('acme', 'docs', 3)], next_page_offset: null }),
    );
    await expectCode(store.ensureCollection('acme', 'docs', { dimensions: 5 }), 'CONFLICT', /length 3, not 5/);
    await expectCode(
      store.upsert('acme', 'docs', [{ id: 'a', text: 'x', vector: [1, 0] }]),
      'INVALID_INPUT',
      /length 3, not 2/,
    );
    expect(server.requests.filter((request) => request.method === 'PUT')).toEqual([]);
  });

  it('checks arguments before sending anything', async () => {
    await expectCode(store.upsert('', 'docs', [{ id: 'a', text: 'x' }]), 'INVALID_INPUT');
    await expectCode(
      store.upsert('acme', 'docs', [
        { id: 'a', text: 'x' },
        { id: 'a', text: 'y' },
      ]),
      'INVALID_INPUT',
    );
    await expectCode(store.delete('acme', 'docs', { filter: {} }), 'INVALID_INPUT');
    await expectCode(store.query('acme', {}), 'INVALID_INPUT');
    expect(server.requests).toEqual([]);
  });
});

describe('QdrantVectorStore: deleting and counting', () => {
  beforeEach(async () => {
    prepared();
    await settled();
  });

  it('deletes by id with a filter: tenant, collection and has_id of the point ids', async () => {
    await store.delete('acme', 'docs', { ids: ['a', 'b'] });
    const [request] = server.requests;
    expect(`${request!.method} ${request!.path}`).toBe(`POST ${CHUNKS}/points/delete`);
    expect(request!.query).toEqual({ wait: 'true' });
    expect(request!.body).toEqual({
      filter: {
        must: [
          tenantIs('acme'),
          collectionIs('docs'),
          { has_id: [qdrantPointId(['acme', 'docs', 'a']), qdrantPointId(['acme', 'docs', 'b'])] },
        ],
      },
    });
  });

  it('deletes by payload filter within the tenant and collection', async () => {
    await store.delete('acme', 'docs', { filter: { docId: 'doc_1', contentHash: { notIn: ['h2'] } } });
    // Documented: POST /collections/{name}/points/delete {"filter": {"must": [{"key": "color", "match": {"value": "red"}}]}}
    expect(server.requests[0]!.body).toEqual({
      filter: {
        must: [
          tenantIs('acme'),
          collectionIs('docs'),
          { key: 'payload.docId', match: { value: 'doc_1' } },
          {
            must_not: [
              { is_empty: { key: 'payload.contentHash' } },
              { key: 'payload.contentHash', match: { value: 'h2' } },
            ],
          },
        ],
      },
    });
  });

  it('counts exactly, filtered by tenant, collection and payload', async () => {
    server.answer('POST', `${CHUNKS}/points/count`, ok({ count: 3 }));
    expect(await store.count('acme', { collection: 'docs', filter: { lang: 'en' } })).toBe(3);
    // Documented: POST /collections/{name}/points/count {"filter": {...}, "exact": true} → {"result": {"count": 3}}
    expect(server.requests[0]!.body).toEqual({
      filter: { must: [tenantIs('acme'), collectionIs('docs'), { key: 'payload.lang', match: { value: 'en' } }] },
      exact: true,
    });
  });

  it('answers a filter that can match nothing without asking Qdrant', async () => {
    expect(await store.count('acme', { filter: { docId: { in: [] } } })).toBe(0);
    await store.delete('acme', 'docs', { filter: { docId: { in: [] } } });
    expect(await store.query('acme', { text: 'zebra', filter: { docId: { in: [] } } })).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it('deletes a collection: its records and its registry entry, both by tenant filter', async () => {
    server.answer(
      'POST',
      `${REGISTRY}/points/scroll`,
      ok({ points: [registryPoint('acme', 'docs', null)], next_page_offset: null }),
    );
    expect(await store.deleteCollection('acme', 'docs')).toBe(true);
    expect(lines(server.requests)).toEqual([
      `POST ${REGISTRY}/points/scroll`,
      `POST ${CHUNKS}/points/delete`,
      `POST ${REGISTRY}/points/delete`,
    ]);
    for (const request of server.requests)
      expect((request.body as { filter: unknown }).filter).toEqual({ must: [tenantIs('acme'), collectionIs('docs')] });
    server.requests.length = 0;
    expect(await store.deleteCollection('acme', 'docs')).toBe(false);
    expect(lines(server.requests)).toEqual([`POST ${REGISTRY}/points/scroll`, `POST ${CHUNKS}/points/delete`]);
  });

  it('lists the tenant’s collections from the registry, page by page, counted by one exact facet request', async () => {
    server.answer(
      'POST',
      `${REGISTRY}/points/scroll`,
      ok({
        points: [registryPoint('acme', 'zeta', 3), registryPoint('acme', 'alpha', null)],
        next_page_offset: 'f5b1c0de-0000-4000-8000-000000000000',
      }),
      ok({ points: [registryPoint('acme', 'empty', null)], next_page_offset: null }),
    );
    server.answer(
      'POST',
      `${CHUNKS}/facet`,
      ok({
        hits: [
          { value: 'zeta', count: 12 },
          { value: 'alpha', count: 4 },
        ],
      }),
    );
    expect(await store.listCollections('acme')).toEqual([
      { name: 'alpha', count: 4, dimensions: null },
      { name: 'empty', count: 0, dimensions: null },
      { name: 'zeta', count: 12, dimensions: 3 },
    ]);
    const [firstPage, secondPage] = server.requestsTo(/\/points\/scroll$/);
    expect(firstPage!.body).toEqual({
      filter: { must: [tenantIs('acme')] },
      limit: 256,
      with_payload: true,
      with_vector: false,
    });
    expect(secondPage!.body).toMatchObject({ offset: 'f5b1c0de-0000-4000-8000-000000000000' });
    // Documented: POST /collections/{name}/facet {"key": "size", "filter": {...}} → {"result": {"hits": [{"value": "L", "count": 19}]}}
    expect(server.requestsTo(/\/facet$/)[0]!.body).toEqual({
      key: 'collection',
      filter: { must: [tenantIs('acme'), { key: 'collection', match: { any: ['zeta', 'alpha', 'empty'] } }] },
      limit: 3,
      exact: true,
    });
  });
});

describe('QdrantVectorStore: querying', () => {
  const point = (id: string, score: number, text = `text of ${id}`) => ({
    id: qdrantPointId(['acme', 'docs', id]),
    version: 3,
    score,
    payload: { collection: 'docs', record_id: id, text, payload: { docId: 'd1' } },
  });

  beforeEach(async () => {
    prepared([3]);
    await settled();
  });

  it('a text query is a sparse query on bm25, weight 1 per term, filtered by tenant, collection and payload', async () => {
    // Documented answer: {"result": {"points": [{"id": …, "version": 3, "score": 0.75, "payload": {…}}]}, "status": "ok", "time": …}
    server.answer(
      'POST',
      `${CHUNKS}/points/query`,
      ok({ points: [point('a', 4.2, 'The zebra runs.'), point('b', 1.1)] }),
    );
    const hits = await store.query('acme', {
      collection: 'docs',
      text: 'Zebras running!',
      filter: { docId: 'd1' },
      limit: 5,
    });
    expect(server.requests[0]!.body).toEqual({
      query: { indices: [bm25TokenId('zebra'), bm25TokenId('run')], values: [1, 1] },
      using: 'bm25',
      filter: { must: [tenantIs('acme'), collectionIs('docs'), { key: 'payload.docId', match: { value: 'd1' } }] },
      limit: 5,
      with_payload: WITH_PAYLOAD,
      with_vector: false,
    });
    expect(hits).toEqual([
      { id: 'a', collection: 'docs', score: 4.2, lexicalScore: 4.2, text: 'The zebra runs.', payload: { docId: 'd1' } },
      { id: 'b', collection: 'docs', score: 1.1, lexicalScore: 1.1, text: 'text of b', payload: { docId: 'd1' } },
    ]);
  });

  it('a vector query searches the named dense vector of its length, across the tenant’s collections when none is named', async () => {
    await store.query('acme', { vector: [0.9, 0.1, 0] });
    expect(server.requests[0]!.body).toEqual({
      query: [0.9, 0.1, 0],
      using: 'dense-3',
      filter: { must: [tenantIs('acme')] },
      limit: 10,
      with_payload: WITH_PAYLOAD,
      with_vector: false,
    });
  });

  it('text and vector: prefetch sparse and dense, each filtered, fused by RRF with k = 61 (= Σ 1/(60 + rank from 1))', async () => {
    const fused = 1 / 61 + 1 / 62;
    server.answer('POST', `${CHUNKS}/points/query`, ok({ points: [point('both', fused), point('one', 1 / 61)] }));
    const hits = await store.query('acme', { collection: 'docs', text: 'zebra', vector: [1, 0, 0], limit: 3 });
    const filter = { must: [tenantIs('acme'), collectionIs('docs')] };
    // Documented: {"prefetch": [{"query": {"indices": […], "values": […]}, "using": "sparse", "limit": 20}, {"query": […], "using": "dense", "limit": 20}], "query": {"rrf": {"k": 60}}, "limit": 10}
    expect(server.requests[0]!.body).toEqual({
      prefetch: [
        { query: { indices: [bm25TokenId('zebra')], values: [1] }, using: 'bm25', filter, limit: 50 },
        { query: [1, 0, 0], using: 'dense-3', filter, limit: 50 },
      ],
      query: { rrf: { k: 61 } },
      filter,
      limit: 3,
      with_payload: WITH_PAYLOAD,
      with_vector: false,
    });
    expect(hits.map((hit) => [hit.id, hit.score])).toEqual([
      ['both', fused],
      ['one', 1 / 61],
    ]);
  });

  it('text and vector where only one side can match: one query, scores still reciprocal ranks', async () => {
    server.answer('POST', `${CHUNKS}/points/query`, ok({ points: [point('a', 7.5), point('b', 3.2)] }));
    const hits = await store.query('acme', { text: 'zebra', vector: [1, 0], limit: 2 });
    expect((server.requestsTo(/\/points\/query$/)[0]!.body as { using: string }).using).toBe('bm25');
    expect(hits.map((hit) => [hit.id, hit.score])).toEqual([
      ['a', 1 / 61],
      ['b', 1 / 62],
    ]);
  });

  it("text and vector with fusion 'scores': one lexical and one dense query, fused here by normalised scores (dense × denseWeight)", async () => {
    server.answer(
      'POST',
      `${CHUNKS}/points/query`,
      ok({ points: [point('lex', 9), point('both', 5), point('low', 1)] }),
      ok({ points: [point('both', 0.8), point('dense', 0.4)] }),
    );
    const hits = await store.query('acme', {
      collection: 'docs',
      text: 'zebra',
      vector: [1, 0, 0],
      limit: 3,
      fusion: { method: 'scores', denseWeight: 0.5 },
    });
    const bodies = server
      .requestsTo(/\/points\/query$/)
      .map((request) => request.body as { using: string; limit: number; prefetch?: unknown });
    expect(bodies.map((body) => [body.using, body.limit, body.prefetch])).toEqual([
      ['bm25', 50, undefined],
      ['dense-3', 50, undefined],
    ]);
    // lex 1; both 0.5 + 0.5 × 1; dense 0.5 × 0; low 0.
    expect(hits.map((hit) => [hit.id, hit.score])).toEqual([
      ['lex', 1],
      ['both', 1],
      ['low', 0],
    ]);
  });

  it('sends no query that cannot match: text without words, a vector length no record has', async () => {
    expect(await store.query('acme', { text: '!!! the ???' })).toEqual([]);
    expect(await store.query('acme', { vector: [1, 0] })).toEqual([]);
    expect(server.requestsTo(/\/points\/query$/)).toEqual([]);
  });
});

describe('QdrantVectorStore: tenant isolation on the wire', () => {
  it('names the tenant first in the filter of every request that reads or deletes points, and in every point written', async () => {
    prepared([3]);
    server.answer(
      'POST',
      `${REGISTRY}/points/scroll`,
      ok({ points: [], next_page_offset: null }),
      ok({ points: [], next_page_offset: null }),
      ok({ points: [registryPoint('acme', 'docs', 3)], next_page_offset: null }),
    );
    await store.ensureCollection('acme', 'docs');
    await store.upsert('acme', 'docs', [{ id: 'a', text: 'zebra', vector: [1, 0, 0], payload: { docId: 'd1' } }]);
    await store.query('acme', { text: 'zebra' });
    await store.query('acme', { vector: [1, 0, 0], collection: 'docs' });
    await store.query('acme', { text: 'zebra', vector: [1, 0, 0], filter: { docId: 'd1' } });
    await store.count('acme');
    await store.count('acme', { collection: 'docs', filter: { docId: 'd1' } });
    await store.delete('acme', 'docs', { ids: ['a'] });
    await store.delete('acme', 'docs', { filter: { docId: 'd1' } });
    await store.listCollections('acme');
    await store.deleteCollection('acme', 'docs');

    const pointRequests = server.requests.filter((request) =>
      /\/(points\/(query|count|delete|scroll)|facet)$/.test(request.path),
    );
    expect(new Set(pointRequests.map((request) => request.path.split('/').slice(3).join('/')))).toEqual(
      new Set(['points/scroll', 'points/query', 'points/count', 'points/delete', 'facet']),
    );
    for (const request of pointRequests) {
      const body = request.body as { filter?: { must: unknown[] }; prefetch?: { filter: { must: unknown[] } }[] };
      expect(body.filter?.must[0], `${request.method} ${request.path}`).toEqual(tenantIs('acme'));
      for (const prefetch of body.prefetch ?? []) expect(prefetch.filter.must[0]).toEqual(tenantIs('acme'));
    }
    const written = server
      .requestsTo(/\/points$/, 'PUT')
      .flatMap((request) => (request.body as { points: { payload: { tenant: string } }[] }).points);
    expect(written.length).toBeGreaterThan(0);
    for (const point of written) expect(point.payload.tenant).toBe('acme');
  });

  it('refuses to work after close()', async () => {
    await store.close();
    await expectCode(store.count('acme'), 'INTERNAL', /closed/);
  });
});
