import { bm25Tokens } from '../../../shared/retrieval/bm25-tokens.js';

/**
 * The terms of `text` that carry meaning, each once, in order: lower-cased, accents folded, stopwords
 * dropped and stemmed (`discovered` and `discovery` meet), as the BM25 encoder does. Sentence matching
 * compares these, so it agrees with how the index matched the passage in the first place.
 */
export function keyTerms(text: string): string[] {
  return [...new Set(bm25Tokens(text))];
}

/** Words of `text` worth searching for: its words minus stopwords, as written, each once (for readable queries). */
export function searchWords(text: string): string[] {
  const words: string[] = [];
  const seen = new Set<string>();
  for (const word of text.match(/[\p{L}\p{M}\p{N}]+(?:['’.-][\p{L}\p{M}\p{N}]+)*/gu) ?? []) {
    const terms = bm25Tokens(word);
    if (terms.length === 0 || seen.has(word.toLowerCase())) continue;
    seen.add(word.toLowerCase());
    words.push(word);
  }
  return words;
}
