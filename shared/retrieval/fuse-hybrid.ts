import type { HybridFusion } from '../ports/vector-store.js';
import { reciprocalRankFusion, RRF_K, type RankedItem } from './reciprocal-rank-fusion.js';
import { weightedScoreFusion } from './weighted-score-fusion.js';

/**
 * The lexical and dense rankings of a hybrid query, fused as `fusion` says (VectorQuery.fusion; RRF by
 * default). `withoutVector` names the lexical hits that have no vector yet (added in the background
 * after ingest): the dense side cannot rank them, so each counts on that side what it counts on the
 * lexical one (its lexical rank for RRF, its normalised lexical score for `scores`) — as if the model
 * agreed with BM25 about it. A collection with no vector at all is then ranked as BM25 ranks it, one
 * fully embedded as before, and one half embedded does not push its chunks without a vector down.
 * Each fused item keeps what each side scored it (`lexicalScore`: BM25, `similarity`: cosine), for a
 * relevance that means the same across queries (relevance-score.ts).
 */
export function fuseHybrid<T extends RankedItem & { score: number }>(
  lexical: readonly T[],
  dense: readonly T[],
  fusion: HybridFusion = { method: 'rrf' },
  withoutVector?: (item: T) => boolean,
): (T & SideScores)[] {
  const fused =
    fusion.method === 'scores'
      ? weightedScoreFusion([
          { items: lexical, weight: 1 },
          { items: dense, weight: fusion.denseWeight },
        ])
      : reciprocalRankFusion([lexical, dense]);
  return withSideScores(withStandIns(fused, lexical, fusion, withoutVector), lexical, dense);
}

/** What each side of a hybrid query scored an item (VectorHit's fields of the same names). */
interface SideScores {
  lexicalScore?: number;
  similarity?: number;
}

/** The fused ranking with each chunk still without a vector counted on the dense side as on the lexical one. */
function withStandIns<T extends RankedItem & { score: number }>(
  fused: T[],
  lexical: readonly T[],
  fusion: HybridFusion,
  withoutVector?: (item: T) => boolean,
): T[] {
  const standIns = withoutVector ? lexical.filter(withoutVector) : [];
  if (standIns.length === 0) return fused;
  const extra = new Map<string, number>();
  if (fusion.method === 'scores') {
    const scores = lexical.map((item) => item.score);
    const high = Math.max(...scores);
    const low = Math.min(...scores);
    for (const item of standIns)
      extra.set(itemKey(item), fusion.denseWeight * (high > low ? (item.score - low) / (high - low) : 1));
  } else {
    lexical.forEach((item, index) => {
      if (withoutVector!(item)) extra.set(itemKey(item), 1 / (RRF_K + index + 1));
    });
  }
  // Array.prototype.sort is stable: equal scores keep the fused order.
  return fused
    .map((item) => ({ ...item, score: item.score + (extra.get(itemKey(item)) ?? 0) }))
    .sort((left, right) => right.score - left.score);
}

function withSideScores<T extends RankedItem & { score: number }>(
  fused: T[],
  lexical: readonly T[],
  dense: readonly T[],
): (T & SideScores)[] {
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

function itemKey(item: RankedItem): string {
  return `${item.collection ?? ''}\u0000${item.id}`;
}

function scoresByItem(items: readonly (RankedItem & { score: number })[]): Map<string, number> {
  const scores = new Map<string, number>();
  for (const item of items) if (!scores.has(itemKey(item))) scores.set(itemKey(item), item.score);
  return scores;
}
