import type { VectorStore } from '../ports/vector-store.js';
import { embeddedStoreOptions, qdrantStoreOptions, type VectorStoreConfig } from './vector-store-config.js';

/**
 * `createVectorStore`, loading only the adapter the configuration names: the Qdrant client costs a
 * one-shot command (`agentq search` on the embedded store) about 130 ms of CPU it does not use.
 */
export async function openVectorStore(config: VectorStoreConfig): Promise<VectorStore> {
  if (config.qdrantUrl) {
    const { QdrantVectorStore } = await import('./qdrant/qdrant-vector-store.js');
    return new QdrantVectorStore(qdrantStoreOptions({ ...config, qdrantUrl: config.qdrantUrl }));
  }
  const { SqliteVectorStore } = await import('./sqlite/sqlite-vector-store.js');
  return new SqliteVectorStore(embeddedStoreOptions(config));
}
