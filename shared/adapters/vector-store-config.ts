import { resolve } from 'node:path';
import type { Config } from '../config/config.js';
import type { QdrantVectorStoreOptions } from './qdrant/qdrant-vector-store.js';
import type { SqliteVectorStoreOptions } from './sqlite/sqlite-vector-store.js';

/** What the vector-store factories read from the configuration. */
export type VectorStoreConfig = Pick<
  Config,
  | 'dataDir'
  | 'qdrantUrl'
  | 'qdrantApiKey'
  | 'qdrantCollectionPrefix'
  | 'qdrantTimeoutMs'
  | 'qdrantUpsertBatchSize'
  | 'vectorCacheMb'
>;

/** The embedded store's file: `<AGENTQ_DATA_DIR>/vectors.sqlite`. */
export function embeddedVectorStorePath(config: Pick<Config, 'dataDir'>): string {
  return resolve(config.dataDir, 'vectors.sqlite');
}

/** The embedded store's options from the configuration (QDRANT_URL unset). */
export function embeddedStoreOptions(config: Pick<Config, 'dataDir' | 'vectorCacheMb'>): SqliteVectorStoreOptions {
  return { path: embeddedVectorStorePath(config), vectorCacheBytes: config.vectorCacheMb * 1024 * 1024 };
}

/** The Qdrant adapter's options from the configuration (QDRANT_URL set). */
export function qdrantStoreOptions(config: VectorStoreConfig & { qdrantUrl: string }): QdrantVectorStoreOptions {
  return {
    url: config.qdrantUrl,
    ...(config.qdrantApiKey ? { apiKey: config.qdrantApiKey } : {}),
    collectionPrefix: config.qdrantCollectionPrefix,
    timeoutMs: config.qdrantTimeoutMs,
    upsertBatchSize: config.qdrantUpsertBatchSize,
  };
}
