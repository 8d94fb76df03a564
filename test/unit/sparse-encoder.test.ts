import { describe, expect, it } from 'vitest';
import { Bm25SparseEncoder } from '../../shared/retrieval/bm25-sparse-encoder.js';
import { bm25Tokens } from '../../shared/retrieval/bm25-tokens.js';
import { bm25TokenId, murmurHash3 } from '../../shared/retrieval/murmur-hash3.js';

describe('murmurHash3 (x86, 32 bit) and token ids', () => {
  it('matches the reference implementation and Python’s mmh3 on known inputs', () => {
    expect(murmurHash3('')).toBe(0);
    expect(murmurHash3('hello')).toBe(0x248bfa47);
    expect(murmurHash3('The quick brown fox jumps over the lazy dog')).toBe(0x2e4ff723);
    // mmh3's README: mmh3.hash("foo") == -156908512, mmh3.hash("foo", 42) == -1322301282.
    expect(murmurHash3('foo') | 0).toBe(-156908512);
    expect(murmurHash3('foo', 42) | 0).toBe(-1322301282);
  });

  it('hashes UTF-8 bytes, like mmh3 on a Python str', () => {
    expect(murmurHash3('zèbre')).not.toBe(murmurHash3('zebre'));
    expect(murmurHash3('日本')).toBe(murmurHash3('日本'));
  });

  it('token id = abs(signed hash), as fastembed’s Bm25.compute_token_id', () => {
    expect(bm25TokenId('foo')).toBe(156908512);
    expect(bm25TokenId('zebra')).toBe(Math.abs(murmurHash3('zebra') | 0));
  });
});

describe('bm25Tokens', () => {
  it('lowercases, drops stopwords and stems with Porter2', () => {
    expect(bm25Tokens('The Zebras are RUNNING across the Savanna!')).toEqual(['zebra', 'run', 'across', 'savanna']);
    expect(bm25Tokens('giraffe giraffes')).toEqual(['giraff', 'giraff']);
  });

  it('folds Latin diacritics and ligatures, so unaccented queries find accented text', () => {
    expect(bm25Tokens('Zèbre CAFÉ Straße Øresund')).toEqual(['zebr', 'cafe', 'strass', 'oresund']);
    expect(bm25Tokens('zebre cafe')).toEqual(['zebr', 'cafe']);
  });

  it('treats search syntax and symbols as separators, never as operators', () => {
    expect(bm25Tokens('text:zebra "zeb*" ((( 🦓 zebra\'s \u0000zebra AND')).toEqual([
      'text',
      'zebra',
      'zeb',
      'zebra',
      'zebra',
    ]);
    expect(bm25Tokens('!!! ??? ...')).toEqual([]);
    expect(bm25Tokens('')).toEqual([]);
  });

  it('keeps words of other scripts whole and drops tokens over 40 characters', () => {
    expect(bm25Tokens('नमस्ते दुनिया')).toEqual(['नमस्ते', 'दुनिया']);
    expect(bm25Tokens(`short ${'x'.repeat(41)} ${'y'.repeat(40)}`)).toEqual(['short', 'y'.repeat(40)]);
  });
});

describe('Bm25SparseEncoder', () => {
  const encoder = new Bm25SparseEncoder();
  const weightOf = (vector: { indices: number[]; values: number[] }, term: string) =>
    vector.values[vector.indices.indexOf(bm25TokenId(term))];

  it('is deterministic: the same term gets the same index in every document and query', () => {
    const first = encoder.encodeDocument('Zebras graze at dawn.');
    const second = encoder.encodeDocument('A zebra, alone.');
    const query = encoder.encodeQuery('zebra');
    expect(first.indices).toContain(bm25TokenId('zebra'));
    expect(second.indices).toContain(bm25TokenId('zebra'));
    expect(query).toEqual({ indices: [bm25TokenId('zebra')], values: [1] });
    expect(encoder.encodeDocument('Zebras graze at dawn.')).toEqual(first);
  });

  it('weights terms by BM25 saturation tf·(k+1)/(tf + k·(1 − b + b·len/avgLen)); the idf half is the server’s', () => {
    const vector = encoder.encodeDocument('zebra zebra lion');
    const norm = 1.2 * (1 - 0.75 + (0.75 * 3) / 256);
    expect(weightOf(vector, 'zebra')).toBeCloseTo((2 * 2.2) / (2 + norm), 12);
    expect(weightOf(vector, 'lion')).toBeCloseTo((1 * 2.2) / (1 + norm), 12);
    expect(new Set(vector.indices).size).toBe(vector.indices.length);
  });

  it('saturates repeats below k + 1 and gives a term less weight in a longer document', () => {
    const weights = [1, 2, 4, 8, 64].map((times) =>
      weightOf(encoder.encodeDocument(Array(times).fill('okapi').join(' ')), 'okapi')!,
    );
    for (let index = 1; index < weights.length; index += 1) {
      expect(weights[index]!).toBeGreaterThan(weights[index - 1]!);
      expect(weights[index]! - weights[index - 1]!).toBeLessThan(
        index === 1 ? 1 : weights[index - 1]! - weights[index - 2]!,
      );
    }
    expect(weights.at(-1)!).toBeLessThan(2.2);
    const short = weightOf(encoder.encodeDocument('okapi forest'), 'okapi')!;
    const long = weightOf(encoder.encodeDocument(`okapi ${'forest river mountain '.repeat(100)}`), 'okapi')!;
    expect(long).toBeLessThan(short);
  });

  it('queries carry weight 1 per distinct term; text without terms encodes to nothing', () => {
    const query = encoder.encodeQuery('zebra ZEBRAS savanna the');
    expect(query.indices).toEqual([bm25TokenId('zebra'), bm25TokenId('savanna')]);
    expect(query.values).toEqual([1, 1]);
    expect(encoder.encodeQuery('the of and')).toEqual({ indices: [], values: [] });
    expect(encoder.encodeDocument('')).toEqual({ indices: [], values: [] });
  });

  it('refuses parameters outside BM25’s ranges', () => {
    expect(() => new Bm25SparseEncoder({ b: 1.5 })).toThrow(/0 <= b <= 1/);
    expect(() => new Bm25SparseEncoder({ averageLength: 0 })).toThrow(/averageLength > 0/);
  });
});
