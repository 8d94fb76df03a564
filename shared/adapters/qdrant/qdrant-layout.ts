/**
 * How agentq lays its data out in Qdrant (one place, so the adapter, its tests and docs/operations/qdrant.md agree).
 *
 * **One shared chunks collection for every tenant and every agentq collection**, partitioned by payload:
 * each point carries `tenant` and `collection`, `tenant` has a keyword index with `is_tenant: true`
 * (Qdrant stores each tenant's points together), and every request the adapter sends — query, count,
 * delete, scroll, facet — has `tenant` in its filter's `must`. Qdrant recommends this over a collection
 * per tenant, which costs memory and file handles per collection and stops scaling at a few hundred
 * (Qdrant Cloud caps clusters at 1000 collections); agentq creates tenants and collections on demand.
 * Isolation stays simple because one function builds every filter and starts it with the tenant
 * (`QdrantVectorStore.scope`), and the request-level tests check the tenant in every request body.
 *
 * - `<prefix>_chunks`: sparse vector `bm25` (`modifier: idf`) on every point; dense vectors, when records
 *   carry them, in a named vector per length, `dense-<length>` (cosine), added when first needed — so two
 *   agentq collections embedded by models of different sizes share the Qdrant collection.
 * - `<prefix>_collections`: one point per (tenant, agentq collection) with its vector length, so empty
 *   collections exist and a length conflict is caught before anything is written. No vectors.
 */

/** The sparse (BM25) named vector of every chunk. */
export const SPARSE_VECTOR = 'bm25';

/** The named dense vector holding vectors of this length. */
export function denseVectorName(dimensions: number): string {
  return `dense-${dimensions}`;
}

/** The length a dense vector name holds, or null for other names. */
export function denseVectorDimensions(name: string): number | null {
  const match = /^dense-(\d+)$/.exec(name);
  return match ? Number(match[1]) : null;
}

export interface QdrantCollectionNames {
  chunks: string;
  registry: string;
}

export function qdrantCollectionNames(prefix: string): QdrantCollectionNames {
  return { chunks: `${prefix}_chunks`, registry: `${prefix}_collections` };
}

/** Body of `PUT /collections/<prefix>_chunks`: named dense vectors (maybe none yet) and the BM25 sparse vector. */
export function chunksCollectionBody(dimensions: number | null): {
  vectors: Record<string, { size: number; distance: 'Cosine' }>;
  sparse_vectors: Record<string, { modifier: 'idf' }>;
} {
  return {
    vectors: dimensions === null ? {} : { [denseVectorName(dimensions)]: { size: dimensions, distance: 'Cosine' } },
    sparse_vectors: { [SPARSE_VECTOR]: { modifier: 'idf' } },
  };
}

/** Body of `PUT /collections/<prefix>_collections`: payload only. */
export const REGISTRY_COLLECTION_BODY = { vectors: {} } as const;

export type PayloadIndexSchema = 'keyword' | { type: 'keyword'; is_tenant: true };

/** Payload indexes of the chunks collection: every field a filter of ours or of the ingest pipeline names. */
export const CHUNK_PAYLOAD_INDEXES: ReadonlyArray<readonly [field: string, schema: PayloadIndexSchema]> = [
  ['tenant', { type: 'keyword', is_tenant: true }],
  ['collection', 'keyword'],
  // The ingest pipeline deletes a document's chunks by docId, and older versions by contentHash.
  ['payload.docId', 'keyword'],
  ['payload.contentHash', 'keyword'],
];

export const REGISTRY_PAYLOAD_INDEXES: ReadonlyArray<readonly [field: string, schema: PayloadIndexSchema]> = [
  ['tenant', { type: 'keyword', is_tenant: true }],
  ['collection', 'keyword'],
];

/**
 * Oldest Qdrant that has everything used here: `is_tenant` (1.11), the facet API (1.12) and the RRF
 * constant `{"rrf": {"k": …}}` (1.16). Adding a dense vector of a new length to an existing chunks
 * collection needs 1.18 (`PUT /collections/{name}/vectors/{vector}`).
 */
export const MINIMUM_QDRANT_VERSION: readonly [major: number, minor: number] = [1, 16];
