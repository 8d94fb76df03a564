import type { HybridFusion } from './vector-store.js';

/** Per-call options of `Embedder.embed`. */
export interface EmbedOptions {
  /** The step's signal: cancellation, timeout, deadline, shutdown. @default none */
  abortSignal?: AbortSignal;
  /**
   * What the texts are: `query` (a search's question, a sentence compared with it) or `document`
   * (chunks being indexed). A model may read them differently (the local one reads a shorter leading
   * window of a document, AGENTQ_LOCAL_EMBED_DOCUMENT_TOKENS). @default 'query'
   */
  input?: 'query' | 'document';
}

/** Vectors for texts, in the order the texts were given. */
export interface EmbedResult {
  /** One vector per input text, same order; every vector has `dimensions` numbers. */
  vectors: number[][];
  /** Input tokens the provider counted (a local estimate when it sent none). */
  usage: { inputTokens: number };
  /** The model that answered, as the provider names it. */
  model: string;
  /** Length of every vector (discovered from the provider's answer, not configured). */
  dimensions: number;
}

/**
 * An embedding model (docs/architecture.md: vendor SDKs live only behind ports). One method: texts in, vectors
 * out. Implementations batch as their provider requires, do not retry, and throw an `AgentqError` whose
 * `retryable` / `retryAfterMs` tell the step processor what to do (docs/reference/errors.md), like `LanguageModel`.
 */
export interface Embedder {
  /** The provider, as the OpenTelemetry GenAI conventions name it, e.g. `openai`. */
  readonly provider: string;
  /** The model requested, e.g. `text-embedding-3-small` or `nomic-embed-text`. */
  readonly modelId: string;
  /** The model runs in this process (no provider to protect): provider limits (AGENTQ_RATE_LIMITS) do not apply. @default false */
  readonly inProcess?: boolean;
  /** How searches fuse this model's dense ranking with BM25 (a weak model gets less say). @default { method: 'rrf' } */
  readonly fusion?: HybridFusion;
  /** Embeds `texts` (an empty list answers no vectors without a request). */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<EmbedResult>;
}
