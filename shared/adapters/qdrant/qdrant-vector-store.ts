import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';
import { AgentqError } from '../../contracts/errors.js';
import {
  checkCollection,
  checkEnsureCollection,
  checkFilter,
  checkQuery,
  checkRecords,
  checkTenant,
  MAX_QUERY_LIMIT,
} from '../../ports/vector-store-arguments.js';
import type {
  CollectionInfo,
  DeleteSelector,
  PayloadFilter,
  VectorHit,
  VectorQuery,
  VectorRecord,
  VectorStore,
} from '../../ports/vector-store.js';
import { Bm25SparseEncoder, type Bm25SparseEncoderOptions } from '../../retrieval/bm25-sparse-encoder.js';
import { fuseHybrid } from '../../retrieval/fuse-hybrid.js';
import { keywordCondition, recordFilterConditions, type QdrantCondition } from './qdrant-filter.js';
import { denseVectorName, qdrantCollectionNames, SPARSE_VECTOR, type QdrantCollectionNames } from './qdrant-layout.js';
import { QdrantLayoutKeeper } from './qdrant-layout-keeper.js';
import { qdrantPointId } from './qdrant-point-id.js';
import { callQdrant, qdrantStatus, type QdrantRetryOptions } from './qdrant-request.js';
import { dimensionsOf, toHit } from './qdrant-hit.js';
import { createQdrantClient } from './qdrant-module.js';
import { RRF_K } from '../../retrieval/reciprocal-rank-fusion.js';

export interface QdrantVectorStoreOptions {
  /** Qdrant's REST address, e.g. `http://qdrant:6333` (QDRANT_URL). */
  url: string;
  /** Sent as the `api-key` header (QDRANT_API_KEY). @default none */
  apiKey?: string;
  /** The Qdrant collections used are `<prefix>_chunks` and `<prefix>_collections` (AGENTQ_QDRANT_COLLECTION_PREFIX). @default 'agentq' */
  collectionPrefix?: string;
  /** Per request (AGENTQ_QDRANT_TIMEOUT_MS). @default 30000 */
  timeoutMs?: number;
  /** Points per upsert request (AGENTQ_QDRANT_UPSERT_BATCH). @default 256 */
  upsertBatchSize?: number;
  /** Retries of requests that failed for a passing reason (5xx, timeout, connection). @default see QdrantRetryOptions */
  retry?: QdrantRetryOptions;
  /** BM25 parameters of the client-side sparse encoding. Changing them needs a re-index. @default {k: 1.2, b: 0.75, averageLength: 256} */
  bm25?: Bm25SparseEncoderOptions;
}

/**
 * The vector store on a Qdrant server (used when QDRANT_URL is set): several worker machines share it,
 * and it scales to millions of chunks with HNSW for dense vectors and an inverted index for BM25.
 *
 * Layout (see qdrant-layout.ts for why): one shared chunks collection partitioned by a `tenant` payload
 * field with an `is_tenant` index, plus a small registry of agentq collections. Every request carries
 * the tenant in its filter; ids become UUIDv5 point ids, the original id stays in the payload.
 *
 * Lexical search is BM25 as sparse vectors, encoded here (Bm25SparseEncoder) with the server's `idf`
 * modifier supplying the document frequencies; dense search is cosine on `dense-<length>`; a query
 * with both is fused by Qdrant's Query API (`prefetch` + RRF with k = 61, which is the port's
 * Σ 1/(60 + rank) since Qdrant counts ranks from 0).
 *
 * Limits: IDF statistics are collection-wide, so (as in the embedded store) a tenant's scores, not what
 * it can see, depend slightly on other tenants' text. An upsert larger than one batch is not atomic: a
 * failure part-way leaves the earlier batches written (re-running it is safe: same ids, same points).
 */
export class QdrantVectorStore implements VectorStore {
  readonly provider = 'qdrant';
  private readonly client: QdrantClient;
  private readonly names: QdrantCollectionNames;
  private readonly encoder: Bm25SparseEncoder;
  private readonly upsertBatchSize: number;
  private readonly retry: QdrantRetryOptions;
  private readonly layout: QdrantLayoutKeeper;
  private closed = false;

  constructor({
    url,
    apiKey,
    collectionPrefix = 'agentq',
    timeoutMs = 30_000,
    upsertBatchSize = 256,
    retry = {},
    bm25 = {},
  }: QdrantVectorStoreOptions) {
    if (!/^[A-Za-z0-9_-]{1,48}$/.test(collectionPrefix)) {
      throw new AgentqError(
        'INVALID_INPUT',
        `Qdrant collection prefix must be 1-48 characters of letters, digits, '_' or '-', got ${JSON.stringify(collectionPrefix)}`,
      );
    }
    if (!Number.isInteger(upsertBatchSize) || upsertBatchSize < 1)
      throw new AgentqError(
        'INVALID_INPUT',
        `Qdrant upsert batch size must be a positive integer, got ${upsertBatchSize}`,
      );
    this.client = createQdrantClient({ url, timeoutMs, apiKey });
    this.names = qdrantCollectionNames(collectionPrefix);
    this.encoder = new Bm25SparseEncoder(bm25);
    this.upsertBatchSize = upsertBatchSize;
    this.retry = retry;
    this.layout = new QdrantLayoutKeeper(this.client, this.names, url, (operation, request) =>
      this.call(operation, request),
    );
  }

  async ensureCollection(tenant: string, collection: string, options: { dimensions?: number } = {}): Promise<void> {
    const dimensions = checkEnsureCollection(tenant, collection, options.dimensions);
    await this.layout.ready(dimensions);
    await this.register(tenant, collection, dimensions, 'CONFLICT');
    if (dimensions !== null) await this.layout.ensureDenseVector(dimensions);
  }

  async listCollections(tenant: string): Promise<CollectionInfo[]> {
    checkTenant(tenant);
    await this.layout.ready();
    const entries: { name: string; dimensions: number | null }[] = [];
    let offset: Schemas['ExtendedPointId'] | undefined;
    do {
      const page = await this.request('list the collections', () =>
        this.client.scroll(this.names.registry, {
          filter: { must: this.scope(tenant) },
          limit: 256,
          with_payload: true,
          with_vector: false,
          ...(offset === undefined ? {} : { offset }),
        }),
      );
      for (const point of page.points)
        entries.push({ name: String(point.payload?.collection), dimensions: dimensionsOf(point.payload) });
      const next = page.next_page_offset;
      offset = typeof next === 'string' || typeof next === 'number' ? next : undefined;
    } while (offset !== undefined);
    if (entries.length === 0) return [];
    const names = entries.map((entry) => entry.name);
    // One facet request counts every collection's records (exact: this is a listing, not an estimate).
    const facet = await this.request('count records per collection', () =>
      this.client.facet(this.names.chunks, {
        key: 'collection',
        filter: { must: [...this.scope(tenant), { key: 'collection', match: { any: names } }] },
        limit: names.length,
        exact: true,
      }),
    );
    const counts = new Map(facet.hits.map((hit) => [String(hit.value), hit.count]));
    return entries
      .map(({ name, dimensions }) => ({ name, count: counts.get(name) ?? 0, dimensions }))
      .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  }

  async deleteCollection(tenant: string, collection: string): Promise<boolean> {
    checkTenant(tenant);
    checkCollection(collection);
    await this.layout.ready();
    const existed = (await this.registryEntry(tenant, collection)) !== null;
    // Records go even when the registry has no entry: nothing of a deleted collection may stay findable.
    await this.request('delete the records of a collection', () =>
      this.client.delete(this.names.chunks, { wait: true, filter: { must: this.scope(tenant, collection) } }),
    );
    if (existed)
      await this.request('remove a collection from the registry', () =>
        this.client.delete(this.names.registry, { wait: true, filter: { must: this.scope(tenant, collection) } }),
      );
    return existed;
  }

  async upsert(tenant: string, collection: string, records: readonly VectorRecord[]): Promise<void> {
    checkTenant(tenant);
    checkCollection(collection);
    const dimensions = checkRecords(records);
    await this.layout.ready(dimensions);
    await this.register(tenant, collection, dimensions, 'INVALID_INPUT');
    if (dimensions !== null) await this.layout.ensureDenseVector(dimensions);
    const points = records.map((record) => this.toPoint(tenant, collection, record));
    for (let start = 0; start < points.length; start += this.upsertBatchSize) {
      const batch = points.slice(start, start + this.upsertBatchSize);
      await this.request(`upsert ${batch.length} points`, () =>
        this.client.upsert(this.names.chunks, { wait: true, points: batch }),
      );
    }
  }

  async delete(tenant: string, collection: string, selector: DeleteSelector): Promise<void> {
    checkTenant(tenant);
    checkCollection(collection);
    let conditions: QdrantCondition[];
    if ('ids' in selector) {
      if (!Array.isArray(selector.ids) || selector.ids.some((id) => typeof id !== 'string'))
        throw new AgentqError('INVALID_INPUT', 'vector store: delete {ids} takes an array of string ids');
      if (selector.ids.length === 0) return;
      // By filter, not by point list: the tenant condition then guards even a delete by id.
      conditions = [{ has_id: selector.ids.map((id) => qdrantPointId([tenant, collection, id])) }];
    } else {
      checkFilter(selector.filter);
      if (Object.keys(selector.filter ?? {}).length === 0) {
        throw new AgentqError(
          'INVALID_INPUT',
          'vector store: delete {filter} needs at least one condition; use deleteCollection to remove everything',
        );
      }
      const translated = recordFilterConditions(selector.filter);
      if (translated === 'never') return;
      conditions = translated;
    }
    await this.layout.ready();
    await this.request('delete records', () =>
      this.client.delete(this.names.chunks, {
        wait: true,
        filter: { must: [...this.scope(tenant, collection), ...conditions] },
      }),
    );
  }

  async count(tenant: string, options: { collection?: string; filter?: PayloadFilter } = {}): Promise<number> {
    checkTenant(tenant);
    if (options.collection !== undefined) checkCollection(options.collection);
    checkFilter(options.filter);
    const conditions = recordFilterConditions(options.filter);
    if (conditions === 'never') return 0;
    await this.layout.ready();
    const result = await this.request('count records', () =>
      this.client.count(this.names.chunks, {
        filter: { must: [...this.scope(tenant, options.collection), ...conditions] },
        exact: true,
      }),
    );
    return result.count;
  }

  async query(tenant: string, query: VectorQuery): Promise<VectorHit[]> {
    checkTenant(tenant);
    const { limit } = checkQuery(query);
    const conditions = recordFilterConditions(query.filter);
    if (conditions === 'never') return [];
    await this.layout.ready();
    const filter = { must: [...this.scope(tenant, query.collection), ...conditions] };
    const sparse = query.text === undefined ? undefined : this.encoder.encodeQuery(query.text);
    // Text without a single term matches nothing; a vector of a length no record has matches nothing.
    const lexical =
      sparse !== undefined && sparse.indices.length > 0 ? { query: sparse, using: SPARSE_VECTOR } : undefined;
    const dense =
      query.vector !== undefined && (await this.layout.hasDenseVector(query.vector.length))
        ? { query: [...query.vector], using: denseVectorName(query.vector.length) }
        : undefined;
    const request = { filter, limit, with_payload: ['collection', 'record_id', 'text', 'payload'], with_vector: false };
    if (lexical && dense) {
      // Each side fetches more than `limit`, so that an item ranked lower on one side can still rise.
      const candidates = Math.min(MAX_QUERY_LIMIT, Math.max(limit * 4, 50));
      if (query.fusion?.method === 'scores') {
        // Qdrant's server-side fusions have no weights: both rankings are fetched and fused here, as the embedded store does.
        const side = async (what: string, using: typeof lexical | typeof dense) =>
          (
            await this.request(what, () =>
              this.client.query(this.names.chunks, { ...request, ...using, limit: candidates }),
            )
          ).points.map((point) => toHit(point));
        const [lexicalHits, denseHits] = await Promise.all([
          side('lexical query', lexical),
          side('dense query', dense),
        ]);
        return fuseHybrid(lexicalHits, denseHits, query.fusion).slice(0, limit);
      }
      // Fused on the server: its hits carry no side's score (a relevance then rests on word overlap alone).
      const result = await this.request('hybrid query', () =>
        this.client.query(this.names.chunks, {
          ...request,
          prefetch: [
            { ...lexical, filter, limit: candidates },
            { ...dense, filter, limit: candidates },
          ],
          query: { rrf: { k: RRF_K + 1 } },
        }),
      );
      return result.points.map((point) => toHit(point));
    }
    const side = lexical ?? dense;
    if (!side) return [];
    const result = await this.request(lexical ? 'lexical query' : 'dense query', () =>
      this.client.query(this.names.chunks, { ...request, ...side }),
    );
    // One side: its score is the BM25 or the cosine similarity itself.
    const hits = result.points.map((point) => ({
      ...toHit(point),
      [lexical ? 'lexicalScore' : 'similarity']: point.score,
    }));
    // Asked for both but only one side can match: still a fused score, as the port documents.
    return query.text !== undefined && query.vector !== undefined
      ? fuseHybrid(lexical ? hits : [], lexical ? [] : hits, query.fusion)
      : hits;
  }

  /** No connections to release: the HTTP client's idle keep-alive sockets close on their own. Later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
  }

  /** The start of every filter: the tenant always, the agentq collection when one is named. */
  private scope(tenant: string, collection?: string): QdrantCondition[] {
    return collection === undefined
      ? [keywordCondition('tenant', tenant)]
      : [keywordCondition('tenant', tenant), keywordCondition('collection', collection)];
  }

  private toPoint(tenant: string, collection: string, record: VectorRecord): Schemas['PointStruct'] {
    // The context (title, headings) is indexed with the text, so a chunk is found by its document's name.
    const sparse = this.encoder.encodeDocument(record.context ? `${record.context}\n${record.text}` : record.text);
    const vector: Record<string, Schemas['Vector']> = {};
    if (sparse.indices.length > 0) vector[SPARSE_VECTOR] = sparse;
    if (record.vector) vector[denseVectorName(record.vector.length)] = [...record.vector];
    return {
      id: qdrantPointId([tenant, collection, record.id]),
      vector,
      payload: {
        tenant,
        collection,
        record_id: record.id,
        text: record.text,
        context: record.context ?? '',
        payload: record.payload ?? {},
      },
    };
  }

  private async registryEntry(
    tenant: string,
    collection: string,
  ): Promise<{ dimensions: number | null; createdAt: unknown } | null> {
    const page = await this.request('read the collection registry', () =>
      this.client.scroll(this.names.registry, {
        filter: { must: this.scope(tenant, collection) },
        limit: 1,
        with_payload: true,
        with_vector: false,
      }),
    );
    const point = page.points[0];
    return point ? { dimensions: dimensionsOf(point.payload), createdAt: point.payload?.created_at } : null;
  }

  /**
   * Records the collection (and its vector length once known) in the registry, refusing another length.
   * Two processes giving one new collection different lengths at the same moment can both pass this
   * check (last writer wins the registry); one embedding model per collection, as ingest does, never does.
   */
  private async register(
    tenant: string,
    collection: string,
    dimensions: number | null,
    conflictCode: 'CONFLICT' | 'INVALID_INPUT',
  ): Promise<void> {
    const entry = await this.registryEntry(tenant, collection);
    if (entry && entry.dimensions !== null && dimensions !== null && entry.dimensions !== dimensions) {
      throw new AgentqError(
        conflictCode,
        `vector store: collection '${collection}' holds vectors of length ${entry.dimensions}, not ${dimensions}; use another collection for another embedding model`,
      );
    }
    if (entry && (dimensions === null || entry.dimensions === dimensions)) return;
    const payload = { tenant, collection, dimensions, created_at: entry?.createdAt ?? new Date().toISOString() };
    await this.request('register the collection', () =>
      this.client.upsert(this.names.registry, {
        wait: true,
        points: [{ id: qdrantPointId([tenant, collection]), vector: {}, payload }],
      }),
    );
  }

  /** One request with retries (see callQdrant); refused once the store is closed. */
  private call<T>(operation: string, request: () => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(
        new AgentqError('INTERNAL', `Qdrant vector store is closed (${operation}); create a new one`),
      );
    return callQdrant(operation, request, this.retry);
  }

  /**
   * A request on agentq's collections. A 404 means they were removed behind our back (an operator
   * resetting Qdrant): the layout is checked again on the next call, which re-creates them, so the
   * error is retryable.
   */
  private async request<T>(operation: string, request: () => Promise<T>): Promise<T> {
    try {
      return await this.call(operation, request);
    } catch (error) {
      if (qdrantStatus(error) !== 404) throw error;
      this.layout.forget();
      throw new AgentqError(
        'UNAVAILABLE',
        `${(error as Error).message}; agentq's Qdrant collections are gone and will be re-created on the next call`,
        { retryable: true, details: { status: 404 }, cause: error },
      );
    }
  }
}
