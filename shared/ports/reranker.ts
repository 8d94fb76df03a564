/** A passage a reranker scores: what a reader of the hit sees. */
export interface RerankCandidate {
  title: string;
  text: string;
}

/** Per-call options of `Reranker.score`. */
export interface RerankOptions {
  /** The step's signal: cancellation, timeout, deadline, shutdown. */
  abortSignal: AbortSignal;
}

/**
 * A second-stage scorer over a search's best hits (docs/guides/batch-qa.md, "Reranking"): it reads the
 * question beside each passage whole, where the first stage (BM25, vectors) scored them one index entry
 * at a time. A cross-encoder or a hosted rerank API fits behind it (an adapter in `shared/adapters/`);
 * agentq's built-in one is lexical and runs offline. Implementations do not retry and throw an
 * `AgentqError` whose `retryable` tells the step processor what to do, as `Embedder` does.
 */
export interface Reranker {
  /** Named in the run's reasoning steps, e.g. `lexical`. */
  readonly name: string;
  /** How well each candidate answers `query`, in [0, 1], in the candidates' order (one number each). */
  score(query: string, candidates: readonly RerankCandidate[], options: RerankOptions): Promise<number[]>;
}
