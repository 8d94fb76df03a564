import type { HybridFusion } from '../ports/vector-store.js';
import { reciprocalRankFusion, type RankedItem } from './reciprocal-rank-fusion.js';
import { weightedScoreFusion } from './weighted-score-fusion.js';

/**
 * The lexical and dense rankings of a hybrid query, fused as `fusion` says (VectorQuery.fusion; RRF by
 * default). `withoutVector` names the lexical hits that have no vector yet (added in the background
 * after ingest): the dense side cannot rank them, so each counts on that side what it counts on the
 * lexical one (its lexical rank for RRF, its normalised lexical score for `scores`) — as if the model
 * agreed with BM25 about it. A collection with no vector at all is then ranked as BM25 ranks it, one
 * fully embedded as before, and one half embedded does not push its chunks without a vector down.
 */
export function fuseHybrid<T extends RankedItem & { score: number }>(
  lexical: readonly T[],
  dense: readonly T[],
  fusion: HybridFusion = { method: 'rrf' },
  withoutVector?: (item: T) => boolean,
): T[] {
  const fused =
    fusion.method === 'scores'
      ? weightedScoreFusion([
          { items: lexical, weight: 1 },
          { items: dense, weight: fusion.denseWeight },
        ])
      : reciprocalRankFusion([lexical, dense]);
  const standIns = withoutVector ? lexical.filter(withoutVector) : [];
  if (standIns.length === 0) return fused;
  const keyOf = (item: RankedItem) => `${item.collection ?? ''}\u0000${item.id}`;
  const extra = new Map<string, number>();
  if (fusion.method === 'scores') {
    const scores = lexical.map((item) => item.score);
    const high = Math.max(...scores);
    const low = Math.min(...scores);
    for (const item of standIns)
      extra.set(keyOf(item), fusion.denseWeight * (high > low ? (item.score - low) / (high - low) : 1));
  } else {
    lexical.forEach((item, index) => {
      if (withoutVector!(item)) extra.set(keyOf(item), 1 / (60 + index + 1));
    });
  }
  // Array.prototype.sort is stable: equal scores keep the fused order.
  return fused
    .map((item) => ({ ...item, score: item.score + (extra.get(keyOf(item)) ?? 0) }))
    .sort((left, right) => right.score - left.score);
}
