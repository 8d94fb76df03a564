import { resolve } from 'node:path';
import type { Config } from '../../shared/config.js';
import type { QdrantVectorStoreOptions } from './qdrant-vector-store.js';

/** What the vector-store factories read from the configuration. */
export type VectorStoreConfig = Pick<Config, 'dataDir' | 'qdrantUrl' | 'qdrantApiKey' | 'qdrantCollectionPrefix' | 'qdrantTimeoutMs' | 'qdrantUpsertBatchSize'>;

/** The embedded store's file: `<AGENTQ_DATA_DIR>/vectors.sqlite`. */
export function embeddedVectorStorePath(config: Pick<Config, 'dataDir'>): string {
  return resolve(config.dataDir, 'vectors.sqlite');
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
