import { BoundedMemo } from '../contracts/bounded-memo.js';
import { bm25Tokens } from './bm25-tokens.js';

/**
 * BM25 per query term at which the lexical relevance's BM25 side reaches 1 − 1/e ≈ 0.63: about one match
 * of a moderately rare word in a passage of average length (FTS5's and Qdrant's BM25 alike).
 */
const BM25_PER_TERM = 3;

/** What word overlap alone can claim: a passage holding every word of the question scores 0.8, not 1. */
const OVERLAP_WEIGHT = 0.8;

/** What a search hit tells about how it matched (VectorHit's `similarity` and `lexicalScore`). */
interface HitEvidence {
  /** Cosine similarity with the query's embedding, when a dense model compared them. */
  similarity?: number;
  /** The store's BM25 score for the query's text, when it matched lexically. */
  lexicalScore?: number;
  /** What the passage says, its title included: the words the question is looked for in. */
  text: string;
}

/**
 * A hit's relevance in [0, 1], the same whatever else the search returned and comparable across
 * queries (unlike a raw BM25 or fusion score, which only orders one result list):
 *  - where a dense model compared the passage with the query: their cosine similarity (negative → 0);
 *  - otherwise the calibrated lexical relevance, `lexicalRelevance`.
 */
export function relevanceOf(query: string, hit: HitEvidence): number {
  if (hit.similarity !== undefined && Number.isFinite(hit.similarity)) return round(clamp(hit.similarity));
  return round(lexicalRelevance(query, hit.lexicalScore ?? 0, hit.text));
}

/**
 * The calibrated lexical relevance: the stronger of two readings of the same match.
 *  - BM25 per query term, squashed: 1 − exp(−bm25 / (BM25_PER_TERM × the query's content terms)). BM25
 *    grows with the number of words a query has; divided by them it means the same for a short and a
 *    long question.
 *  - Word overlap: OVERLAP_WEIGHT × the share of the query's content terms (stemmed, stopwords dropped)
 *    the passage holds. BM25 weighs words by rarity within the collection, which says nothing in a small
 *    one: in a collection of four documents, a word two of them hold has an inverse document frequency
 *    of about 0, and a passage matching only such words had a score of 0 however relevant it was.
 * Measured on the evaluation sets' lexical top-20 hits (gold passage vs the rest, AUC pooled over all
 * questions, i.e. how well one threshold works across queries; bench/relevance-calibration.ts): SQuAD
 * 0.948, HotpotQA 0.875; the raw BM25 0.904 / 0.858. BM25 relative to each search's best hit (the
 * earlier score) gets 0.973 / 0.897 there only because every question of those sets has its gold
 * passage, which is then usually scored 1: it gives 1 to the best hit of a search that found nothing
 * relevant too, and 0 to a relevant second passage of a small collection.
 */
export function lexicalRelevance(query: string, bm25: number, text: string): number {
  const terms = new Set(bm25Tokens(query));
  if (terms.size === 0) return 0;
  const squashed = bm25 > 0 ? 1 - Math.exp(-bm25 / (BM25_PER_TERM * terms.size)) : 0;
  const words = termsOf(text);
  let shared = 0;
  for (const term of terms) if (words.has(term)) shared += 1;
  return clamp(Math.max(squashed, (OVERLAP_WEIGHT * shared) / terms.size));
}

/**
 * Terms of passages seen before: a batch's searches return the same passages again and again. Cleared
 * when full, so memory stays bounded whatever the input.
 */
const passageTerms = new BoundedMemo<string, ReadonlySet<string>>({ limit: 4096 });

function termsOf(text: string): ReadonlySet<string> {
  return passageTerms.getOrSet(text, termSet);
}

/** At module level, so a lookup makes no closure (termsOf runs per passage and question). */
function termSet(passage: string): ReadonlySet<string> {
  return new Set(bm25Tokens(passage));
}

function clamp(value: number): number {
  return Math.min(1, Math.max(0, value));
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
