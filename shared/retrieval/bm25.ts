/** BM25's two tuning constants: term-frequency saturation `k` and length normalisation `b` (0 to 1). */
export interface Bm25Parameters {
  k: number;
  b: number;
}

export const BM25_DEFAULTS: Bm25Parameters = { k: 1.2, b: 0.75 };

/** BM25's inverse document frequency of a term found in `frequency` of `count` documents; always > 0. */
export function bm25Idf(count: number, frequency: number): number {
  return Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5));
}

/**
 * BM25's term-frequency half for a term found `frequency` times in a document of `length` terms:
 * `tf·(k+1) / (tf + k·(1 − b + b·len/avgLen))`. The whole score of a term is this times its idf.
 */
export function bm25TermWeight(
  frequency: number,
  { length, averageLength }: { length: number; averageLength: number },
  { k, b }: Bm25Parameters = BM25_DEFAULTS,
): number {
  return (frequency * (k + 1)) / (frequency + k * (1 - b + (b * length) / averageLength));
}

/**
 * The BM25 score of each document (its terms, already tokenised) for the query's distinct terms, with
 * idf and the average length measured over `documents` themselves: ranking a small set in memory.
 */
export function bm25Scores(
  documents: readonly (readonly string[])[],
  queryTerms: readonly string[],
  parameters: Bm25Parameters = BM25_DEFAULTS,
): number[] {
  const averageLength = Math.max(
    1,
    documents.reduce((sum, words) => sum + words.length, 0) / Math.max(1, documents.length),
  );
  const documentFrequency = new Map<string, number>();
  for (const words of documents)
    for (const word of new Set(words)) documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
  const distinct = [...new Set(queryTerms)];
  return documents.map((words) => {
    const frequency = new Map<string, number>();
    for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1);
    let score = 0;
    for (const term of distinct) {
      const count = frequency.get(term) ?? 0;
      if (count === 0) continue;
      const idf = bm25Idf(documents.length, documentFrequency.get(term) ?? 0);
      score += idf * bm25TermWeight(count, { length: words.length, averageLength }, parameters);
    }
    return score;
  });
}
