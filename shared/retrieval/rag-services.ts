import type { VectorStore } from '../ports/vector-store.js';

/** The services `rag-agent` reads besides the agent ones (language model, embedder). */
export interface RagServices {
  /**
   * Where ingested documents are searched. @default the store the environment's configuration names
   * (QDRANT_URL, else the embedded file under AGENTQ_DATA_DIR), opened on first use — pass one when
   * `startWorker` gets a config other than the environment's, so searches see what its ingest wrote.
   */
  vectorStore?: VectorStore;
}

declare module '../graph/node-context.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merges the RAG ports into Services
  interface Services extends RagServices {}
}
