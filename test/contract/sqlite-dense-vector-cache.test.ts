import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterAll, describe, expect, it } from 'vitest';
import type { VectorQuery, VectorRecord } from '../../shared/ports/vector-store.js';
import { DenseVectorCache } from '../../shared/adapters/sqlite/dense-vector-cache.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';

const directory = mkdtempSync(join(tmpdir(), 'agentq-dense-cache-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const newFile = () => join(directory, `store-${(files += 1)}.sqlite`);

let seed = 7;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1;
const vectorOf = (dimensions: number) => Array.from({ length: dimensions }, random);
const WORDS = ['harbour', 'lighthouse', 'ferry', 'tide', 'anchor', 'gull', 'pier', 'storm'];
const recordsOf = (count: number, dimensions: number, prefix = 'r'): VectorRecord[] =>
  Array.from({ length: count }, (_, index) => ({
    id: `${prefix}${index}`,
    text: `${WORDS[index % WORDS.length]} ${WORDS[(index * 3) % WORDS.length]} note ${index}`,
    vector: vectorOf(dimensions),
    payload: { docId: `doc${index % 25}`, part: index % 4 },
  }));

/** Both paths over one file: the in-memory cache (the default) and sqlite-vec's scan (cache off). */
function storesOn(path: string, options: { vectorCacheBytes?: number } = {}) {
  return {
    cached: new SqliteVectorStore({ path, ...options }),
    scanned: new SqliteVectorStore({ path, vectorCacheBytes: 0 }),
  };
}

describe('SqliteVectorStore dense search from memory (DenseVectorCache)', () => {
  it('returns what sqlite-vec returns: the same hits in the same order, dense, hybrid and filtered', async () => {
    const path = newFile();
    const { cached, scanned } = storesOn(path);
    await cached.upsert('acme', 'harbour', recordsOf(400, 64));
    await cached.upsert('acme', 'other', recordsOf(50, 64, 'o'));
    await cached.upsert('rival', 'harbour', recordsOf(50, 64, 'x'));
    const queries: VectorQuery[] = [];
    for (let index = 0; index < 20; index += 1) {
      const vector = vectorOf(64);
      queries.push({ collection: 'harbour', vector, limit: 20 });
      queries.push({
        collection: 'harbour',
        vector,
        text: `${WORDS[index % WORDS.length]} note`,
        fusion: { method: 'scores', denseWeight: 0.3 },
        limit: 10,
      });
      queries.push({ collection: 'harbour', vector, text: 'tide anchor', limit: 10 });
      queries.push({ collection: 'harbour', vector, limit: 10, filter: { docId: { in: ['doc1', 'doc7', 'doc9'] } } });
      queries.push({ collection: 'harbour', vector, text: 'pier', limit: 5, filter: { part: 2 } });
    }
    for (const query of queries) {
      const fromMemory = await cached.query('acme', query);
      const fromScan = await scanned.query('acme', query);
      expect(fromMemory.map((hit) => hit.id)).toEqual(fromScan.map((hit) => hit.id));
      fromMemory.forEach((hit, rank) => expect(hit.score).toBeCloseTo(fromScan[rank]!.score, 5));
      expect(
        fromMemory.every((hit) => hit.collection === 'harbour' && !hit.id.startsWith('x') && !hit.id.startsWith('o')),
      ).toBe(true);
    }
    await Promise.all([cached.close(), scanned.close()]);
  });

  it('sees every write, from this connection or another process’s, before the next query', async () => {
    const path = newFile();
    const { cached } = storesOn(path);
    const other = new SqliteVectorStore({ path });
    await cached.upsert('acme', 'c', recordsOf(30, 8));
    const target = vectorOf(8);
    // Twice: the first search since a change is sqlite-vec's, the second is answered from memory (loaded then); both must agree.
    const nearestIds = async () => {
      const [first, second] = [
        await cached.query('acme', { collection: 'c', vector: target, limit: 3 }),
        await cached.query('acme', { collection: 'c', vector: target, limit: 3 }),
      ];
      expect(second.map((hit) => hit.id)).toEqual(first.map((hit) => hit.id));
      return second.map((hit) => hit.id);
    };
    expect(await nearestIds()).not.toContain('new');
    // Another connection (as another worker process) adds the record nearest the query.
    await other.upsert('acme', 'c', [{ id: 'new', text: 'arrival', vector: target }]);
    expect((await nearestIds())[0]).toBe('new');
    // ...moves it away (a new version of its chunk)...
    await other.upsert('acme', 'c', [{ id: 'new', text: 'arrival', vector: target.map((value) => -value) }]);
    expect(await nearestIds()).not.toContain('new');
    await cached.upsert('acme', 'c', [{ id: 'new', text: 'arrival', vector: target }]);
    expect((await nearestIds())[0]).toBe('new');
    // ...and deletes it, by id, by filter, or with the collection.
    await other.delete('acme', 'c', { ids: ['new'] });
    expect(await nearestIds()).not.toContain('new');
    await other.upsert('acme', 'c', [{ id: 'new', text: 'arrival', vector: target, payload: { docId: 'gone' } }]);
    expect((await nearestIds())[0]).toBe('new');
    await other.delete('acme', 'c', { filter: { docId: 'gone' } });
    expect(await nearestIds()).not.toContain('new');
    await other.deleteCollection('acme', 'c');
    expect(await nearestIds()).toEqual([]);
    await Promise.all([cached.close(), other.close()]);
  });

  it('holds at most its byte budget, dropping the least recently used collection, and leaves a larger one to sqlite-vec', async () => {
    const path = newFile();
    const writer = new SqliteVectorStore({ path, vectorCacheBytes: 0 });
    await writer.upsert('acme', 'small-a', recordsOf(100, 16, 'a')); // 6,400 bytes of vectors
    await writer.upsert('acme', 'small-b', recordsOf(100, 16, 'b'));
    await writer.upsert('acme', 'large', recordsOf(300, 16, 'l')); // 19,200 bytes: over the budget alone
    const db = new Database(path, { readonly: true });
    sqliteVec.load(db);
    const cache = new DenseVectorCache(db, 10_000);
    const query = vectorOf(16);
    // The first search of a collection (since it last changed) is left to sqlite-vec; the second loads it.
    expect(cache.nearest('acme', 'small-a', query, 5)).toBeNull();
    expect(cache.heldBytes).toBe(0);
    expect(cache.nearest('acme', 'small-a', query, 5)).toHaveLength(5);
    expect(cache.heldBytes).toBe(6_400);
    expect(cache.nearest('acme', 'small-b', query, 5)).toBeNull();
    expect(cache.nearest('acme', 'small-b', query, 5)).toHaveLength(5);
    expect(cache.heldBytes).toBe(6_400); // small-a dropped to make room
    // A write: the next search goes to sqlite-vec again (and drops the stale copy), the one after reloads.
    await writer.upsert('acme', 'small-b', [{ id: 'late', text: 'late', vector: query }]);
    expect(cache.nearest('acme', 'small-b', query, 5)).toBeNull();
    expect(cache.heldBytes).toBe(0);
    expect(cache.nearest('acme', 'small-b', query, 5)?.[0]).toMatchObject({ similarity: expect.closeTo(1, 6) });
    expect(cache.heldBytes).toBe(6_464);
    expect(cache.nearest('acme', 'large', query, 5)).toBeNull();
    expect(cache.nearest('acme', 'large', query, 5)).toBeNull();
    expect(cache.heldBytes).toBe(6_464);
    // The store answers the large collection all the same (sqlite-vec), with the same hits as without a cache.
    const budgeted = new SqliteVectorStore({ path, vectorCacheBytes: 10_000 });
    const expected = await writer.query('acme', { collection: 'large', vector: query, limit: 5 });
    expect(
      (await budgeted.query('acme', { collection: 'large', vector: query, limit: 5 })).map((hit) => hit.id),
    ).toEqual(expected.map((hit) => hit.id));
    db.close();
    await Promise.all([writer.close(), budgeted.close()]);
  });

  it('finds nothing near a zero query, and never a zero vector, from memory or not', async () => {
    const path = newFile();
    const store = new SqliteVectorStore({ path });
    await store.upsert('acme', 'z', [
      { id: 'zero', text: 'nothing', vector: [0, 0, 0] },
      { id: 'x', text: 'x', vector: [1, 0, 0] },
      { id: 'y', text: 'y', vector: [0, 1, 0] },
    ]);
    for (let search = 0; search < 2; search += 1) {
      // The first search is sqlite-vec's, the second from memory.
      expect(await store.query('acme', { collection: 'z', vector: [0, 0, 0] })).toEqual([]);
      expect(
        (await store.query('acme', { collection: 'z', vector: [1, 0.5, 0], limit: 3 })).map((hit) => hit.id),
      ).toEqual(['x', 'y']);
    }
    await store.close();
  });
});
