/**
 * The vector-store port (docs/architecture.md): where chunks of documents are kept and searched. The embedded
 * `SqliteVectorStore` (shared/adapters/sqlite) is the default; a Qdrant adapter plugs in behind the same port.
 * Every implementation passes the shared contract suite (test/contract/vector-store.contract.ts).
 *
 * **Tenancy is not a filter.** Every method takes the tenant as its first, required parameter, and an
 * implementation never returns, counts or deletes another tenant's records, whatever the other
 * arguments say. A missing or malformed tenant throws `INVALID_INPUT` instead of meaning "all".
 */

/** A value of a payload field that filters can match. */
export type PayloadScalar = string | number | boolean;

/** Any JSON value a payload may carry (arrays and objects are stored and returned, not filtered on). */
export type PayloadValue = PayloadScalar | null | readonly PayloadValue[] | { readonly [key: string]: PayloadValue };

export type Payload = Readonly<Record<string, PayloadValue>>;

/**
 * How one top-level payload field must match: a value (equality), `{in: [...]}` (any of these) or
 * `{notIn: [...]}` (none of these). A record without the field matches none of the three.
 */
export type PayloadMatch =
  PayloadScalar | { readonly in: readonly PayloadScalar[] } | { readonly notIn: readonly PayloadScalar[] };

/**
 * Conditions on top-level payload fields, all of which must hold. Field names are 1-64 characters of
 * `[A-Za-z0-9_]`. Example: `{docId: 'doc_1', page: {in: [1, 2]}}`.
 */
export type PayloadFilter = Readonly<Record<string, PayloadMatch>>;

/** One searchable unit (a chunk of a document). */
export interface VectorRecord {
  /** Unique within its collection; upserting an existing id replaces that record. */
  readonly id: string;
  /** The text lexical queries match and hits return. */
  readonly text: string;
  /**
   * More words lexical queries match that are not part of `text` (a title, a heading path), so a chunk
   * is found by the name of the document it belongs to. @default ''
   */
  readonly context?: string;
  /** Dense embedding. Every vector of one collection has the same length. @default none (lexical only) */
  readonly vector?: readonly number[];
  /** Returned with hits; top-level scalar fields can be filtered on. @default {} */
  readonly payload?: Payload;
}

export interface VectorQuery {
  /** Search this collection only. @default all of the tenant's collections */
  readonly collection?: string;
  /**
   * Lexical query (BM25). Plain user text: words are matched, any search syntax in it is ignored, so
   * no input can make the query fail. Text without a single word matches nothing.
   */
  readonly text?: string;
  /** Dense query (cosine similarity); records without a vector of this length are not candidates. */
  readonly vector?: readonly number[];
  /** Only records whose payload matches. @default none */
  readonly filter?: PayloadFilter;
  /** At most this many hits. @default 10 */
  readonly limit?: number;
  /** How a query with both `text` and `vector` fuses the two rankings. @default { method: 'rrf' } */
  readonly fusion?: HybridFusion;
}

/**
 * Fusion of the lexical and dense rankings of a hybrid query: reciprocal-rank fusion (`rrf`, Σ 1/(60 +
 * rank), both sides equal), or `scores`: each side's scores min-max normalised over its candidates, the
 * dense side's multiplied by `denseWeight`, summed — for an embedding model weaker than BM25 on its own
 * (the built-in local one). The embedded store does both; Qdrant fuses `rrf` on the server and
 * `scores` in the adapter (one lexical and one dense query).
 */
export type HybridFusion = { readonly method: 'rrf' } | { readonly method: 'scores'; readonly denseWeight: number };

/** A hit of a query. */
export interface VectorHit {
  readonly id: string;
  readonly collection: string;
  /**
   * Higher is better, comparable only within one query: BM25 relevance (> 0) for a text query; cosine
   * similarity (-1…1) for a vector query; reciprocal-rank fusion (Σ 1/(60 + rank)) when both are given,
   * or the weighted sum of normalised scores (0…1 + denseWeight) with `fusion: {method: 'scores'}`.
   */
  readonly score: number;
  /** The record's BM25 score for the query's text, when the text matched it. */
  readonly lexicalScore?: number;
  /**
   * Cosine similarity (-1…1) of the record's vector with the query's, when the query had a vector and the
   * record was among the dense candidates (a hybrid query fetches more than `limit` on each side).
   */
  readonly similarity?: number;
  readonly text: string;
  readonly payload: Payload;
}

/** A collection and what it holds. */
export interface CollectionInfo {
  readonly name: string;
  /** Records in the collection. */
  readonly count: number;
  /** Length of its vectors, or null while it has none. */
  readonly dimensions: number | null;
  /**
   * Records without a vector yet: what a background embedder still has to add (stores with
   * `setVectors`; a lexical collection, ingested with no embedder, has all of its records here).
   * @default absent (the store does not count them)
   */
  readonly missingVectors?: number;
}

/** A record waiting for its vector (`VectorStore.pendingVectors`): what the embedder reads. */
export interface PendingVector {
  readonly id: string;
  readonly text: string;
}

/** A vector for a record written earlier without one (`VectorStore.setVectors`). */
export interface VectorUpdate {
  readonly id: string;
  /** The text the vector was computed from: a record whose text changed meanwhile is left alone. */
  readonly text: string;
  readonly vector: readonly number[];
}

/** Which records `delete` removes: these ids, or every record whose payload matches (a non-empty filter). */
export type DeleteSelector = { readonly ids: readonly string[] } | { readonly filter: PayloadFilter };

export interface VectorStore {
  /** The backend, e.g. `sqlite` or `qdrant`. */
  readonly provider: string;
  /**
   * Creates the collection if it does not exist (upsert also does). `dimensions` fixes the length of
   * its vectors up front; a conflicting length for an existing collection throws `CONFLICT`.
   */
  ensureCollection(tenant: string, collection: string, options?: { dimensions?: number }): Promise<void>;
  /** The tenant's collections, by name. */
  listCollections(tenant: string): Promise<CollectionInfo[]>;
  /** Deletes the collection and its records; false when it did not exist. */
  deleteCollection(tenant: string, collection: string): Promise<boolean>;
  /**
   * Inserts the records, replacing those with the same id (text, vector and payload together). All of
   * them or none are written. Creates the collection when missing.
   */
  upsert(tenant: string, collection: string, records: readonly VectorRecord[]): Promise<void>;
  /** Removes records by id or by payload filter. Ids that do not exist are ignored. */
  delete(tenant: string, collection: string, selector: DeleteSelector): Promise<void>;
  /** Best hits first. Needs `text`, `vector` or both (`INVALID_INPUT` otherwise). */
  query(tenant: string, query: VectorQuery): Promise<VectorHit[]>;
  /**
   * Records of the collection that have no vector yet, oldest first, at most `limit`: lets ingestion
   * write chunks searchable by their words at once and add their vectors afterwards (setVectors).
   * Optional: a store without it gets its vectors with the records, at ingest.
   */
  pendingVectors?(tenant: string, collection: string, options: { limit: number }): Promise<PendingVector[]>;
  /**
   * Adds vectors to records written without one, in one write: a record that is gone, already has a
   * vector, or whose text is no longer the text given (replaced meanwhile) is skipped, so a late
   * vector never lands on newer text. Records the collection's vector length like `upsert` (a
   * different length throws `INVALID_INPUT`). → how many records got their vector.
   */
  setVectors?(tenant: string, collection: string, updates: readonly VectorUpdate[]): Promise<number>;
  /** Records of the tenant, optionally of one collection and matching a filter. */
  count(tenant: string, options?: { collection?: string; filter?: PayloadFilter }): Promise<number>;
  /** Releases connections and files. */
  close(): Promise<void>;
}
