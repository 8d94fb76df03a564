import { resolve } from 'node:path';
import type { Config } from '../../shared/config.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import { QdrantVectorStore } from './qdrant-vector-store.js';
import { SqliteVectorStore } from './sqlite-vector-store.js';

/** What the factory reads from the configuration. */
export type VectorStoreConfig = Pick<Config, 'dataDir' | 'qdrantUrl' | 'qdrantApiKey' | 'qdrantCollectionPrefix' | 'qdrantTimeoutMs' | 'qdrantUpsertBatchSize'>;

/** The embedded store's file: `<AGENTQ_DATA_DIR>/vectors.sqlite`. */
export function embeddedVectorStorePath(config: Pick<Config, 'dataDir'>): string {
  return resolve(config.dataDir, 'vectors.sqlite');
}

/**
 * The vector store the configuration names: Qdrant when QDRANT_URL is set (any number of worker
 * machines share it), else the embedded SQLite file under AGENTQ_DATA_DIR (workers, the API and the
 * CLI must then share that folder: one machine). Nothing connects until the first call.
 */
export function createVectorStore(config: VectorStoreConfig): VectorStore {
  if (config.qdrantUrl) {
    return new QdrantVectorStore({
      url: config.qdrantUrl,
      ...(config.qdrantApiKey ? { apiKey: config.qdrantApiKey } : {}),
      collectionPrefix: config.qdrantCollectionPrefix,
      timeoutMs: config.qdrantTimeoutMs,
      upsertBatchSize: config.qdrantUpsertBatchSize,
    });
  }
  return new SqliteVectorStore({ path: embeddedVectorStorePath(config) });
}
