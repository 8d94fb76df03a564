import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion } from '../../shared/retrieval/reciprocal-rank-fusion.js';

const ids = (items: readonly { id: string }[]) => items.map((item) => item.id);
const ranked = (...names: string[]) => names.map((id) => ({ id, collection: 'docs' }));

describe('reciprocalRankFusion', () => {
  it('ranks items found high by both lists above items found first by only one — an order neither list had', () => {
    const lexical = ranked('a', 'b', 'c', 'd');
    const dense = ranked('c', 'd', 'e', 'a');
    const fused = reciprocalRankFusion([lexical, dense]);
    expect(ids(fused)).toEqual(['c', 'a', 'd', 'b', 'e']);
    expect(ids(fused)).not.toEqual(ids(lexical));
    expect(ids(fused)).not.toEqual(ids(dense));
    // Σ 1/(60 + rank), rank from 1: c is 3rd and 1st.
    expect(fused[0]!.score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(fused[3]!.score).toBeCloseTo(1 / 62, 12);
  });

  it('uses k: a small k lets one list’s top hit win, k = 60 rewards agreement', () => {
    const lexical = ranked('solo', 'both');
    const dense = ranked('other', 'x', 'y', 'both');
    expect(ids(reciprocalRankFusion([lexical, dense], 0))[0]).toBe('solo');
    expect(ids(reciprocalRankFusion([lexical, dense]))[0]).toBe('both');
  });

  it('treats the same id in two collections as two items, and keeps first-seen order on ties', () => {
    const fused = reciprocalRankFusion([[{ id: 'a', collection: 'one' }], [{ id: 'a', collection: 'two' }]]);
    expect(fused.map((item) => `${item.collection}/${item.id}`)).toEqual(['one/a', 'two/a']);
    expect(fused[0]!.score).toBe(fused[1]!.score);
  });

  it('returns the item’s own fields with the fused score, and nothing for no lists', () => {
    const [hit] = reciprocalRankFusion([[{ id: 'a', collection: 'c', text: 'zebra', score: 12.5 }]]);
    expect(hit).toEqual({ id: 'a', collection: 'c', text: 'zebra', score: 1 / 61 });
    expect(reciprocalRankFusion([])).toEqual([]);
  });
});
