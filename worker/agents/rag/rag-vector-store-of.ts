import { loadConfig } from '../../../shared/config/config.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { VectorStore } from '../../../shared/ports/vector-store.js';
import '../../../shared/retrieval/rag-services.js';
import { openVectorStore } from '../../../shared/adapters/open-vector-store.js';

let fromEnvironment: Promise<VectorStore> | undefined;

/**
 * The store `rag-agent` searches: `services.vectorStore` when the worker was given one, else the one
 * the environment's configuration names, opened once per process on first use (the same file or
 * server this process's ingest worker writes to when both read the environment).
 */
export async function ragVectorStoreOf(context: Pick<NodeContext, 'services'>): Promise<VectorStore> {
  const given = context.services.vectorStore;
  if (given) return given;
  // Only the adapter the settings name is loaded, by the first search rather than at the worker's start.
  fromEnvironment ??= openVectorStore(loadConfig()).catch((error: unknown) => {
    fromEnvironment = undefined;
    throw error;
  });
  return await fromEnvironment;
}
