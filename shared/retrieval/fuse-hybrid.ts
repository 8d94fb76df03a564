import type { HybridFusion } from '../ports/vector-store.js';
import { reciprocalRankFusion, type RankedItem } from './reciprocal-rank-fusion.js';
import { weightedScoreFusion } from './weighted-score-fusion.js';

/** The lexical and dense rankings of a hybrid query, fused as `fusion` says (VectorQuery.fusion; RRF by default). */
export function fuseHybrid<T extends RankedItem & { score: number }>(
  lexical: readonly T[],
  dense: readonly T[],
  fusion: HybridFusion = { method: 'rrf' },
): T[] {
  if (fusion.method === 'scores') {
    return weightedScoreFusion([
      { items: lexical, weight: 1 },
      { items: dense, weight: fusion.denseWeight },
    ]);
  }
  return reciprocalRankFusion([lexical, dense]);
}
