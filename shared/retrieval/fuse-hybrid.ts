import type { HybridFusion } from '../ports/vector-store.js';
import { reciprocalRankFusion, type RankedItem } from './reciprocal-rank-fusion.js';
import { weightedScoreFusion } from './weighted-score-fusion.js';

/**
 * The lexical and dense rankings of a hybrid query, fused as `fusion` says (VectorQuery.fusion; RRF by
 * default). Each fused item keeps what each side scored it (`lexicalScore`: BM25, `similarity`: cosine),
 * for a relevance that means the same across queries (relevance-score.ts).
 */
export function fuseHybrid<T extends RankedItem & { score: number }>(
  lexical: readonly T[],
  dense: readonly T[],
  fusion: HybridFusion = { method: 'rrf' },
): (T & SideScores)[] {
  const fused =
    fusion.method === 'scores'
      ? weightedScoreFusion([
          { items: lexical, weight: 1 },
          { items: dense, weight: fusion.denseWeight },
        ])
      : reciprocalRankFusion([lexical, dense]);
  const lexicalScores = scoresByItem(lexical);
  const similarities = scoresByItem(dense);
  return fused.map((item) => {
    const lexicalScore = lexicalScores.get(itemKey(item));
    const similarity = similarities.get(itemKey(item));
    return {
      ...item,
      ...(lexicalScore === undefined ? {} : { lexicalScore }),
      ...(similarity === undefined ? {} : { similarity }),
    };
  });
}

/** What each side of a hybrid query scored an item (VectorHit's fields of the same names). */
export interface SideScores {
  lexicalScore?: number;
  similarity?: number;
}

function itemKey(item: RankedItem): string {
  return `${item.collection ?? ''}\u0000${item.id}`;
}

function scoresByItem(items: readonly (RankedItem & { score: number })[]): Map<string, number> {
  const scores = new Map<string, number>();
  for (const item of items) if (!scores.has(itemKey(item))) scores.set(itemKey(item), item.score);
  return scores;
}
