/** Anything a ranked list holds: an id, and the collection it belongs to when ids repeat across collections. */
export interface RankedItem {
  readonly id: string;
  readonly collection?: string;
}

/** The usual reciprocal-rank-fusion constant, the port's (VectorHit.score: Σ 1/(60 + rank)). */
export const RRF_K = 60;

/**
 * Reciprocal-rank fusion of ranked lists, each best first: an item's score is Σ 1/(k + rank) over the
 * lists it appears in, rank starting at 1. The usual k = 60 keeps one list's top hit from drowning
 * the other lists, so an item ranked well by several lists beats one ranked first by a single list.
 *
 * Returns every item once (the same `collection` + `id` is the same item), best first; ties keep the
 * order in which the items were first seen (earlier lists first), so the result is deterministic.
 * The item kept is the first one seen; its fields are returned with the fused `score`.
 */
export function reciprocalRankFusion<T extends RankedItem>(
  lists: readonly (readonly T[])[],
  k = RRF_K,
): (T & { score: number })[] {
  if (!(k >= 0)) throw new RangeError(`reciprocalRankFusion: k must be 0 or more, got ${k}`);
  const fused = new Map<string, { item: T; score: number }>();
  for (const list of lists) {
    list.forEach((item, index) => {
      const key = `${item.collection ?? ''}\u0000${item.id}`;
      const entry = fused.get(key) ?? { item, score: 0 };
      entry.score += 1 / (k + index + 1);
      fused.set(key, entry);
    });
  }
  // Array.prototype.sort is stable: equal scores keep first-seen order.
  return [...fused.values()]
    .sort((left, right) => right.score - left.score)
    .map(({ item, score }) => ({ ...item, score }));
}
