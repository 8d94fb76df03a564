import { fnv1a } from '../fakes/scripted-openai-server.js';

/**
 * A seeded pseudo-random source in [0, 1) (mulberry32): randomised tests draw from it so that a
 * printed seed replays the same choices. `key` derives an independent stream per item (e.g. one per
 * model request), so the draws do not depend on the order in which items happen to arrive.
 */
export function seededRandom(seed: number, key = ''): () => number {
  let state = (seed ^ fnv1a(key)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
