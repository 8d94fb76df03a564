/**
 * What a `rag-agent` run returns: the chat contract of `POST /v1/agent/chat` (`answer`, `sources`,
 * `reasoning_steps`, `search_count`, `iterations`) plus what operators and evaluations need.
 */

/** How passages were found: BM25 only, embeddings only, or both fused. */
export type RetrievalMode = 'lexical' | 'dense' | 'hybrid';

/** What `sources` lists (the RAG input's `sources`, else AGENTQ_RAG_SOURCES): every retrieved page, or the cited ones. */
export type RagSourcesMode = 'all' | 'cited';

/** A retrieved passage's document page. */
export interface RagSource {
  title: string;
  /** The path (or upload name) the document was ingested under. */
  path: string;
  /** 1-based page for paged formats (PDF, DOCX with page breaks); null otherwise. */
  page: number | null;
  /**
   * Relevance in [0, 1], the same for a passage whatever else a search returned and comparable across
   * questions: cosine similarity with the question where a dense model compared them (a hybrid run),
   * else calibrated BM25 — the stronger of BM25 per question word squashed to 0…1 and 0.8 × the share of
   * the question's words the passage holds (shared/retrieval/relevance-score.ts). The best over the run's
   * searches.
   */
  score: number;
  /** The answer cites a passage of this page (outputs made before it was kept have no such field: they list cited pages only). */
  cited: boolean;
}

/** A document the run retrieved, cited or not, best first. */
export interface RetrievedDocument {
  title: string;
  path: string;
  /** The page of its best passage (null for formats without pages). */
  page: number | null;
  /** Relevance in [0, 1] of its best-ranked passage (as `RagSource.score`). */
  score: number;
}

export interface RagOutput {
  /** Grounded in retrieved passages only; with `citations: true` it carries `[n]` markers into `sources`. */
  answer: string;
  /**
   * By document and page: with `sources: 'all'` (the default) every page the run retrieved, best relevance
   * first, each marked `cited`; with `'cited'` the pages the answer cites, in citation order. An answer's
   * `[n]` marker names the n-th entry.
   */
  sources: RagSource[];
  /** What the agent did, in order: searches, refinements, dropped citations. */
  reasoning_steps: string[];
  /** Searches run (each one its own step). */
  search_count: number;
  /** Search rounds run (parallel searches of one decision are one round); at most `max_iterations`. */
  iterations: number;
  /** The model that answered, or `extractive` when the worker has no language model (see docs/guides/batch-qa.md). */
  model: string;
  /** How the searches matched passages. */
  retrieval: RetrievalMode;
  /** Every document the run retrieved, best first: cited ones, then the rest. */
  retrieved: RetrievedDocument[];
  /**
   * Present when the run answered from the tenant's answer cache (`answer_cache`) without searching or calling
   * a model: the run that made the answer, and when it was stored. @default absent
   */
  cached?: { from: string; at: string };
}
