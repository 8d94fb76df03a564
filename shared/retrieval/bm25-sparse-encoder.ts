import { bm25TermWeight } from './bm25.js';
import { bm25Tokens } from './bm25-tokens.js';
import { bm25TokenId } from './murmur-hash3.js';

/** A sparse vector as Qdrant takes it: parallel arrays, indices unique. */
interface SparseVector {
  readonly indices: number[];
  readonly values: number[];
}

export interface Bm25SparseEncoderOptions {
  /** Term-frequency saturation: how fast more occurrences of a term stop adding to the score. @default 1.2 */
  k?: number;
  /** Length normalisation, 0 (none) to 1 (full). @default 0.75 */
  b?: number;
  /**
   * Expected average document length in terms (after stopwords). A fixed value, not measured: the
   * encoding of a document must not depend on what else is stored. @default 256 (fastembed's and Qdrant's)
   */
  averageLength?: number;
}

/**
 * Client-side BM25 as sparse vectors, for a Qdrant sparse vector configured with `modifier: "idf"`:
 * documents carry the term-frequency half of BM25, `tf·(k+1) / (tf + k·(1 − b + b·len/avgLen))`, the
 * server multiplies in each term's inverse document frequency at query time, and queries carry 1 per
 * distinct term. The dot product Qdrant computes is then the BM25 score of the document.
 *
 * Terms come from {@link bm25Tokens}; indices are `abs(murmur3_32(term))` as in fastembed's
 * `Qdrant/bm25` and Qdrant's `qdrant/bm25`, so our points and theirs share one index space (with the
 * same text pipeline: ours folds diacritics, as `qdrant/bm25` does with `ascii_folding: true`).
 * Two different terms can hash to the same index (32 bits): they then count as one term, which
 * BM25 over a realistic vocabulary does not notice.
 */
export class Bm25SparseEncoder {
  readonly k: number;
  readonly b: number;
  readonly averageLength: number;

  constructor({ k = 1.2, b = 0.75, averageLength = 256 }: Bm25SparseEncoderOptions = {}) {
    if (!(k >= 0) || !(b >= 0 && b <= 1) || !(averageLength > 0)) {
      throw new RangeError(
        `Bm25SparseEncoder: need k >= 0, 0 <= b <= 1 and averageLength > 0, got k=${k}, b=${b}, averageLength=${averageLength}`,
      );
    }
    this.k = k;
    this.b = b;
    this.averageLength = averageLength;
  }

  /** A document's vector (empty when the text has no terms). Indices in first-seen order. */
  encodeDocument(text: string): SparseVector {
    const terms = bm25Tokens(text);
    const frequencies = new Map<number, number>();
    for (const term of terms) {
      const index = bm25TokenId(term);
      frequencies.set(index, (frequencies.get(index) ?? 0) + 1);
    }
    const length = { length: terms.length, averageLength: this.averageLength };
    const indices: number[] = [];
    const values: number[] = [];
    for (const [index, frequency] of frequencies) {
      indices.push(index);
      values.push(bm25TermWeight(frequency, length, this));
    }
    return { indices, values };
  }

  /** A query's vector: weight 1 per distinct term, as fastembed's `query_embed` (empty when no terms). */
  encodeQuery(text: string): SparseVector {
    const indices = [...new Set(bm25Tokens(text).map(bm25TokenId))];
    return { indices, values: indices.map(() => 1) };
  }
}
