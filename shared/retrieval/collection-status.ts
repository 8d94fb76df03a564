import type { VectorStore } from '../ports/vector-store.js';

/** What a collection holds and how far its dense vectors are (`agentq ingest`, `GET /v1/collections/:name`). */
export interface CollectionStatus {
  name: string;
  /** Chunks in the collection: every one is searchable by its words as soon as it is written. */
  chunks: number;
  /** Length of its vectors, null while it has none. */
  dimensions: number | null;
  /**
   * Dense vectors, added in the background after ingest: chunks that have one, and chunks still waiting
   * (searched by their words alone until theirs is added). null when no embedder is configured
   * (EMBED_PROVIDER=none: lexical search) or the store takes vectors only at ingest (Qdrant).
   */
  vectors: { added: number; pending: number } | null;
}

/**
 * The tenant's collections and their vector progress; `embedding`: an embedder is configured, so
 * chunks without a vector are pending (without one they are simply lexical).
 */
export async function collectionStatuses(
  store: VectorStore,
  tenant: string,
  embedding: boolean,
): Promise<CollectionStatus[]> {
  return (await store.listCollections(tenant)).map(({ name, count, dimensions, missingVectors }) => ({
    name,
    chunks: count,
    dimensions,
    vectors:
      embedding && missingVectors !== undefined ? { added: count - missingVectors, pending: missingVectors } : null,
  }));
}
