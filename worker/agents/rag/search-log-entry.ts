import type { RetrievalMode } from '../../../shared/retrieval/rag-output.js';

/** One search a `rag-agent` run made (the `searches` state key, appended by each search step). */
export interface SearchLogEntry {
  tool: 'search' | 'refine_and_search';
  query: string;
  /** The search round (1-based) it belongs to. */
  round: number;
  /** Passages it returned. */
  found: number;
  /** How it matched: `hybrid` when the query was also embedded and the collection has vectors. */
  retrieval: RetrievalMode;
}

/** The run's retrieval mode: the strongest any of its searches used (`lexical` when it made none). */
export function retrievalModeOf(searches: readonly SearchLogEntry[]): RetrievalMode {
  if (searches.some((search) => search.retrieval === 'hybrid')) return 'hybrid';
  if (searches.some((search) => search.retrieval === 'dense')) return 'dense';
  return 'lexical';
}
