import { describe, expect, it } from 'vitest';
import { bm25Idf, bm25Scores, bm25TermWeight } from '../../shared/retrieval/bm25.js';
import { Bm25SparseEncoder } from '../../shared/retrieval/bm25-sparse-encoder.js';

describe('BM25, the one implementation', () => {
  it('scores by the formula: idf × tf·(k+1) / (tf + k·(1 − b + b·len/avgLen)), over the documents themselves', () => {
    const documents = [['queue', 'queue', 'redis'], ['redis'], ['worker', 'step', 'redis', 'lock']];
    const [first, second, third] = bm25Scores(documents, ['queue', 'redis', 'queue']);
    const averageLength = 8 / 3;
    const idfQueue = Math.log(1 + (3 - 1 + 0.5) / (1 + 0.5));
    const idfRedis = Math.log(1 + (3 - 3 + 0.5) / (3 + 0.5));
    const weight = (tf: number, length: number) => (tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * length) / averageLength));
    expect(first).toBeCloseTo(idfQueue * weight(2, 3) + idfRedis * weight(1, 3), 12);
    expect(second).toBeCloseTo(idfRedis * weight(1, 1), 12);
    expect(third).toBeCloseTo(idfRedis * weight(1, 4), 12);
    // A rarer term weighs more than one every document has; a shorter document with the same term ranks higher.
    expect(first).toBeGreaterThan(second!);
    expect(second).toBeGreaterThan(third!);
  });

  it('gives no score to a document without any query term, and idf stays above 0 for a term in every document', () => {
    expect(bm25Scores([['a'], ['b']], ['c'])).toEqual([0, 0]);
    expect(bm25Idf(5, 5)).toBeGreaterThan(0);
  });

  it('is the weight the sparse encoder stores for a document (idf left to the server)', () => {
    const vector = new Bm25SparseEncoder().encodeDocument('queues queues redis');
    const weights = [...vector.values].sort();
    const length = { length: 3, averageLength: 256 };
    expect(weights).toEqual([bm25TermWeight(1, length), bm25TermWeight(2, length)].sort());
  });
});
