import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { vectorStoreContract } from './vector-store.contract.js';

const directory = mkdtempSync(join(tmpdir(), 'agentq-sqlite-store-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const newFile = () => join(directory, `store-${(files += 1)}.sqlite`);

vectorStoreContract('SqliteVectorStore', async () => new SqliteVectorStore({ path: newFile() }));
// Dense search without the in-memory vector cache: sqlite-vec's scan (collections over the budget, searches over all collections).
vectorStoreContract(
  'SqliteVectorStore (vector cache off)',
  async () => new SqliteVectorStore({ path: newFile(), vectorCacheBytes: 0 }),
);

describe('SqliteVectorStore (embedded specifics)', () => {
  it('adds vectors after the records (the contract cases on it run, never skip)', async () => {
    const store = new SqliteVectorStore({ path: newFile() });
    expect(typeof store.pendingVectors).toBe('function');
    expect(typeof store.setVectors).toBe('function');
    await store.close();
  });

  it('serves a hybrid query on a collection whose vectors are half added: chunks without one rank by their words', async () => {
    const store = new SqliteVectorStore({ path: newFile() });
    await store.upsert('acme', 'half', [
      { id: 'h1', text: 'apple orchard harvest', payload: {} },
      { id: 'h2', text: 'apple pie recipe', payload: {} },
      { id: 'h3', text: 'banana bread', payload: {} },
    ]);
    await store.setVectors!('acme', 'half', [{ id: 'h3', text: 'banana bread', vector: [1, 0] }]);
    const hits = await store.query('acme', { collection: 'half', text: 'apple', vector: [1, 0] });
    // The chunks with the word rank first though the model has not seen them yet; the one only the model finds comes after.
    expect(hits.map((hit) => hit.id)).toEqual(['h1', 'h2', 'h3']);
    // Once they have vectors too, the model has its say on them (and would move h2 above h1 here).
    await store.setVectors!('acme', 'half', [
      { id: 'h1', text: 'apple orchard harvest', vector: [0, 1] },
      { id: 'h2', text: 'apple pie recipe', vector: [1, 0.1] },
    ]);
    const embedded = await store.query('acme', {
      collection: 'half',
      text: 'apple',
      vector: [1, 0],
      fusion: { method: 'scores', denseWeight: 0.3 },
    });
    expect(embedded.map((hit) => hit.id)).toEqual(['h2', 'h1', 'h3']);
    await store.close();
  });
  it('keeps its records in the file across reopening', async () => {
    const path = newFile();
    const first = new SqliteVectorStore({ path });
    await first.upsert('acme', 'notes', [
      { id: 'n1', text: 'durable aardvark', vector: [0.1, 0.2], payload: { docId: 'd' } },
    ]);
    await first.close();
    const second = new SqliteVectorStore({ path });
    expect((await second.query('acme', { text: 'aardvark' })).map((hit) => hit.id)).toEqual(['n1']);
    expect((await second.query('acme', { vector: [0.1, 0.2] })).map((hit) => hit.id)).toEqual(['n1']);
    await second.close();
  });

  it('lets several connections to one file write in turn and see each other’s writes', async () => {
    const path = newFile();
    const stores = [new SqliteVectorStore({ path }), new SqliteVectorStore({ path }), new SqliteVectorStore({ path })];
    await Promise.all(
      stores.flatMap((store, index) =>
        Array.from({ length: 20 }, (_, round) =>
          store.upsert('acme', 'shared', [
            { id: `s${index}-${round}`, text: `writer ${index} round ${round} pangolin` },
          ]),
        ),
      ),
    );
    for (const store of stores) expect(await store.count('acme', { collection: 'shared' })).toBe(60);
    await Promise.all(stores.map((store) => store.close()));
  });
});
