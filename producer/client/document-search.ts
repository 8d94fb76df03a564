import type { Config } from '../../shared/config/config.js';
import { searchDocuments, type SearchHit, type SearchRequest } from '../../shared/retrieval/search-documents.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import { readSearchConfig, type SearchConfig } from '../../shared/config/search-config.js';

export interface DocumentSearchOptions {
  /**
   * @default the environment's: only its search settings and tenant (readSearchConfig), and the whole
   * configuration (loadConfig) only when a query is to be embedded
   */
  config?: Config;
  /** Tenant of every search that names none. @default config.tenant */
  tenant?: string;
  /** @default the store the configuration names (QDRANT_URL, else the embedded file), opened on first use */
  vectorStore?: VectorStore;
  /**
   * Embeds search queries, so searches fuse lexical and dense ranks over chunks ingested with vectors.
   * `null`: lexical only. @default the embedder EMBED_PROVIDER names (the built-in model unless EMBED_MODEL is set), none with EMBED_PROVIDER=none
   */
  embedder?: Embedder | null;
}

/**
 * Searching the ingested documents, and the vector store behind it: all `agentq search` needs. No
 * Redis, no queue: the CLI's search starts on this alone (CLI cold start); `IngestClient`
 * searches and deletes chunks through one.
 */
export class DocumentSearch {
  private readonly config: SearchConfig & { tenant: string };
  /** The whole configuration when given one: the embedder is built from it. */
  private readonly fullConfig: Config | undefined;
  private readonly tenant: string;
  private vectorStore: VectorStore | undefined;
  private readonly ownsVectorStore: boolean;
  private embedder: Embedder | null | undefined;

  constructor(options: DocumentSearchOptions = {}) {
    // Without a configuration, zod (the whole one's schema) is not loaded: `agentq search` starts on this.
    this.fullConfig = options.config;
    this.config = options.config ?? readSearchConfig();
    this.tenant = options.tenant ?? this.config.tenant;
    this.vectorStore = options.vectorStore;
    this.ownsVectorStore = !options.vectorStore;
    this.embedder = options.embedder === undefined && this.config.embedProvider === 'none' ? null : options.embedder;
  }

  /** Ranked chunks of the tenant's documents (see searchDocuments); with an embedder, the query is embedded too. */
  async search({
    tenant = this.tenant,
    ...request
  }: Omit<SearchRequest, 'tenant'> & { tenant?: string }): Promise<SearchHit[]> {
    const store = await this.store();
    const wantsVector =
      this.embedder !== null && !request.vector && typeof request.query === 'string' && request.query.trim() !== '';
    // Only where vectors are: a collection ingested without embeddings is searched lexically, without loading a model (or its code).
    const withVectors =
      wantsVector &&
      (await store.listCollections(tenant)).some(
        (info) => info.dimensions !== null && (request.collection === undefined || info.name === request.collection),
      );
    const embedder = withVectors ? await this.queryEmbedder() : null;
    if (!embedder) return searchDocuments(store, { ...request, tenant });
    const [vector] = (await embedder.embed([request.query])).vectors;
    return searchDocuments(store, {
      ...request,
      tenant,
      ...(vector ? { vector, ...(embedder.fusion ? { fusion: embedder.fusion } : {}) } : {}),
    });
  }

  /** The vector store, opened on first use. */
  async store(): Promise<VectorStore> {
    if (!this.vectorStore) {
      // The factory lives with the adapters; it loads only the one the configuration names.
      const { openVectorStore } = await import('../../shared/adapters/open-vector-store.js');
      this.vectorStore = await openVectorStore(this.config);
    }
    return this.vectorStore;
  }

  private async queryEmbedder(): Promise<Embedder | null> {
    if (this.embedder === undefined) {
      // Loaded only when a search needs it: the same embedder the workers build (createEmbedder).
      const [{ createEmbedder }, { loadConfig }] = await Promise.all([
        import('../../shared/adapters/create-embedder.js'),
        import('../../shared/config/config.js'),
      ]);
      this.embedder = createEmbedder(this.fullConfig ?? loadConfig()) ?? null;
    }
    return this.embedder;
  }

  /** Closes the vector store it opened (one passed in stays open). */
  async close(): Promise<void> {
    if (this.ownsVectorStore) await this.vectorStore?.close();
  }
}
