import type { VectorStore } from '../ports/vector-store.js';
import { embeddedStoreOptions, qdrantStoreOptions, type VectorStoreConfig } from './vector-store-config.js';

/**
 * `createVectorStore`, loading only the adapter the configuration names: the Qdrant client costs a
 * one-shot command (`agentq search` on the embedded store) about 130 ms of CPU it does not use.
 */
export async function openVectorStore(config: VectorStoreConfig): Promise<VectorStore> {
  return (await loadVectorStore(config))();
}

/**
 * Loads the adapter the configuration names and answers a function that creates the store (nothing
 * connects until its first call): for a caller that must hand out a store synchronously later, as the
 * ingest worker does on its first document.
 */
export async function loadVectorStore(config: VectorStoreConfig): Promise<() => VectorStore> {
  const { qdrantUrl } = config;
  if (qdrantUrl) {
    const { QdrantVectorStore } = await import('./qdrant/qdrant-vector-store.js');
    return () => new QdrantVectorStore(qdrantStoreOptions({ ...config, qdrantUrl }));
  }
  const { SqliteVectorStore } = await import('./sqlite/sqlite-vector-store.js');
  return () => new SqliteVectorStore(embeddedStoreOptions(config));
}
