import { describe, expect, it } from 'vitest';
import { fuseHybrid } from '../../shared/retrieval/fuse-hybrid.js';
import { weightedScoreFusion } from '../../shared/retrieval/weighted-score-fusion.js';

const scored = (...pairs: [string, number][]) => pairs.map(([id, score]) => ({ id, collection: 'docs', score }));
const view = (items: readonly { id: string; score: number }[]) =>
  items.map((item) => [item.id, Math.round(item.score * 1000) / 1000]);

describe('weightedScoreFusion', () => {
  it('normalises each list to 0…1 and sums with the weights: a weak list only breaks near-ties of the strong one', () => {
    const lexical = scored(['a', 10], ['b', 9.5], ['c', 2]);
    const dense = scored(['b', 0.9], ['d', 0.8], ['a', 0.1]);
    // a: 1 + 0.5 × 0; b: 0.9375 + 0.5 × 1; c: 0; d: 0.5 × 0.875.
    expect(
      view(
        weightedScoreFusion([
          { items: lexical, weight: 1 },
          { items: dense, weight: 0.5 },
        ]),
      ),
    ).toEqual([
      ['b', 1.438],
      ['a', 1],
      ['d', 0.438],
      ['c', 0],
    ]);
  });

  it('a list of equal scores (or one item) counts fully; an empty list adds nothing; a negative weight is refused', () => {
    expect(
      view(
        weightedScoreFusion([
          { items: scored(['x', 3]), weight: 1 },
          { items: [], weight: 0.5 },
        ]),
      ),
    ).toEqual([['x', 1]]);
    expect(() => weightedScoreFusion([{ items: scored(['x', 3]), weight: -1 }])).toThrow(RangeError);
  });
});

describe('fuseHybrid', () => {
  it('is RRF unless told otherwise, and weighted scores with {method: scores}', () => {
    const lexical = scored(['a', 10], ['b', 1]);
    const dense = scored(['b', 0.9], ['a', 0.5]);
    expect(view(fuseHybrid(lexical, dense))).toEqual([
      ['a', Math.round((1000 * 2) / 61.5) / 1000],
      ['b', Math.round((1000 * 2) / 61.5) / 1000],
    ]);
    expect(view(fuseHybrid(lexical, dense, { method: 'scores', denseWeight: 0.25 }))).toEqual([
      ['a', 1],
      ['b', 0.25],
    ]);
  });
});
