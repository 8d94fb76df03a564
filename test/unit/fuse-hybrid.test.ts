import { describe, expect, it } from 'vitest';
import { fuseHybrid } from '../../shared/retrieval/fuse-hybrid.js';

const item = (id: string, score: number) => ({ id, score });

describe('fuseHybrid with chunks still without a vector', () => {
  // BM25 ranks a, b, c; the dense side ranks b first, then c (a has no vector yet: the model never saw it).
  const lexical = [item('a', 9), item('b', 6), item('c', 3)];
  const dense = [item('b', 0.9), item('c', 0.5)];

  it('without stand-ins, a chunk the dense side cannot rank falls behind (what a half-embedded collection did)', () => {
    expect(fuseHybrid(lexical, dense, { method: 'rrf' }).map((hit) => hit.id)).toEqual(['b', 'c', 'a']);
  });

  it('RRF: a chunk without a vector counts its lexical rank on the dense side too', () => {
    const fused = fuseHybrid(lexical, dense, { method: 'rrf' }, (hit) => hit.id === 'a');
    expect(fused.map((hit) => hit.id)).toEqual(['a', 'b', 'c']);
    expect(fused[0]!.score).toBeCloseTo(2 / 61, 10);
  });

  it('scores: its normalised lexical score stands in for the dense one, weighted the same', () => {
    const fused = fuseHybrid(lexical, dense, { method: 'scores', denseWeight: 0.5 }, (hit) => hit.id === 'a');
    expect(fused.map((hit) => [hit.id, Number(hit.score.toFixed(3))])).toEqual([
      ['a', 1.5],
      ['b', 1.0],
      ['c', 0],
    ]);
  });

  it('with no vector at all, the fused order is the lexical order; with every vector, nothing changes', () => {
    const none = fuseHybrid(lexical, [], { method: 'scores', denseWeight: 0.3 }, () => true);
    expect(none.map((hit) => hit.id)).toEqual(['a', 'b', 'c']);
    const all = fuseHybrid(lexical, dense, { method: 'scores', denseWeight: 0.3 }, () => false);
    expect(all).toEqual(fuseHybrid(lexical, dense, { method: 'scores', denseWeight: 0.3 }));
  });
});
