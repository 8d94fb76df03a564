import { loadConfig } from '../../../shared/config/config.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { VectorStore } from '../../../shared/ports/vector-store.js';
import '../../../shared/retrieval/rag-services.js';
import { createVectorStore } from '../../../shared/adapters/create-vector-store.js';

let fromEnvironment: VectorStore | undefined;

/**
 * The store `rag-agent` searches: `services.vectorStore` when the worker was given one, else the one
 * the environment's configuration names, opened once per process on first use (the same file or
 * server this process's ingest worker writes to when both read the environment).
 */
export function ragVectorStoreOf(context: Pick<NodeContext, 'services'>): VectorStore {
  const given = context.services.vectorStore;
  if (given) return given;
  const store = fromEnvironment ?? createVectorStore(loadConfig());
  fromEnvironment = store;
  return store;
}
