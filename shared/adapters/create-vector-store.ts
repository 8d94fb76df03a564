import type { VectorStore } from '../ports/vector-store.js';
import { QdrantVectorStore } from './qdrant/qdrant-vector-store.js';
import { SqliteVectorStore } from './sqlite/sqlite-vector-store.js';
import {
  embeddedStoreOptions,
  embeddedVectorStorePath,
  qdrantStoreOptions,
  type VectorStoreConfig,
} from './vector-store-config.js';

export { embeddedStoreOptions, embeddedVectorStorePath, type VectorStoreConfig };

/**
 * The vector store the configuration names: Qdrant when QDRANT_URL is set (any number of worker
 * machines share it), else the embedded SQLite file under AGENTQ_DATA_DIR (workers, the API and the
 * CLI must then share that folder: one machine). Nothing connects until the first call.
 * `openVectorStore` is the same but loads only the adapter it returns.
 */
export function createVectorStore(config: VectorStoreConfig): VectorStore {
  if (config.qdrantUrl) return new QdrantVectorStore(qdrantStoreOptions({ ...config, qdrantUrl: config.qdrantUrl }));
  return new SqliteVectorStore(embeddedStoreOptions(config));
}
