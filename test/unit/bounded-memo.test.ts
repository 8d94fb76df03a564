import { describe, expect, it } from 'vitest';
import { BoundedMemo } from '../../shared/contracts/bounded-memo.js';

const keysOf = (memo: BoundedMemo<string, number>, candidates: readonly string[]) =>
  candidates.filter((key) => memo.has(key));

describe('BoundedMemo', () => {
  it('computes a missing value once and answers it from memory after', () => {
    const memo = new BoundedMemo<string, number>({ limit: 4 });
    let calls = 0;
    const length = (key: string) => {
      calls += 1;
      return key.length;
    };
    expect(memo.getOrSet('abc', length)).toBe(3);
    expect(memo.getOrSet('abc', length)).toBe(3);
    expect(calls).toBe(1);
    expect(memo.get('abc')).toBe(3);
    expect(memo.get('other')).toBeUndefined();
  });

  it('by default empties itself when full and a new key comes, and keeps the new one', () => {
    const memo = new BoundedMemo<string, number>({ limit: 3 });
    for (const key of ['a', 'b', 'c']) memo.set(key, 1);
    expect(memo.size).toBe(3);
    memo.set('d', 2);
    expect(keysOf(memo, ['a', 'b', 'c', 'd'])).toEqual(['d']);
    expect(memo.size).toBe(1);
  });

  it('replaces a kept key in a full memo without emptying it', () => {
    const memo = new BoundedMemo<string, number>({ limit: 3 });
    for (const key of ['a', 'b', 'c']) memo.set(key, 1);
    expect(memo.set('b', 5)).toBe(5);
    expect(keysOf(memo, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(memo.get('b')).toBe(5);
  });

  it("with evict 'oldest' drops only the entry stored the longest ago; storing a key again makes it the newest", () => {
    const memo = new BoundedMemo<string, number>({ limit: 3, evict: 'oldest' });
    for (const key of ['a', 'b', 'c']) memo.set(key, 1);
    memo.set('a', 2);
    memo.set('d', 3);
    expect(keysOf(memo, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    memo.set('e', 4);
    expect(keysOf(memo, ['a', 'b', 'c', 'd', 'e'])).toEqual(['a', 'd', 'e']);
    expect(memo.size).toBe(3);
  });

  it('never holds more than its limit, whatever the policy and the input', () => {
    for (const evict of ['all', 'oldest'] as const) {
      const memo = new BoundedMemo<string, number>({ limit: 50, evict });
      for (let index = 0; index < 1000; index += 1) {
        memo.getOrSet(`key-${index % 137}`, () => index);
        expect(memo.size).toBeLessThanOrEqual(50);
      }
    }
  });
});
