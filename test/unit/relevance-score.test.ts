import { afterEach, describe, expect, it } from 'vitest';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { lexicalRelevance } from '../../shared/retrieval/relevance-score.js';
import { searchDocuments, type SearchHit } from '../../shared/retrieval/search-documents.js';

/** Four documents: two of them hold "Eiffel" and "tower", so BM25 weighs those words at about 0 here. */
const DOCS = [
  {
    id: 'koechlin',
    title: 'Maurice Koechlin',
    text: 'Maurice Koechlin, chief engineer of the company of Gustave Eiffel, drew the first sketch of the Eiffel Tower in 1884.',
    vector: [1, 0, 0],
  },
  {
    id: 'eiffel',
    title: 'Eiffel Tower',
    text: 'The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889 for the World Fair.',
    vector: [0.6, 0.8, 0],
  },
  {
    id: 'louvre',
    title: 'Louvre',
    text: 'The Louvre is the most visited art museum in the world. It stands on the Right Bank of the Seine.',
    vector: [0, 0, 1],
  },
  { id: 'buhl', title: 'Buhl', text: 'Buhl is a commune in the Haut-Rhin department of France.', vector: [0, -1, 0] },
];

const QUESTION = 'Who drew the first sketch of the Eiffel Tower?';

describe("a hit's relevance (issue 40: sources[].score)", () => {
  let store: SqliteVectorStore;
  afterEach(async () => store.close());

  async function fourDocuments(): Promise<SqliteVectorStore> {
    store = new SqliteVectorStore({ path: ':memory:' });
    await store.upsert(
      't',
      'c',
      DOCS.map(({ id, title, text, vector }) => ({
        id,
        text,
        context: title,
        vector,
        payload: { docId: id, title, path: `${id}.md` },
      })),
    );
    return store;
  }

  const byId = (hits: SearchHit[], id: string) => hits.find((hit) => hit.chunkId === id)!;

  it('a relevant second passage of a four-document collection scores above 0, the best one higher, all in [0, 1]', async () => {
    const hits = await searchDocuments(await fourDocuments(), { query: QUESTION, collection: 'c', k: 4, tenant: 't' });
    expect(hits.map((hit) => hit.chunkId).slice(0, 2)).toEqual(['koechlin', 'eiffel']);
    // Its BM25 is about 0 (its words are in half the collection): the score relative to the best hit was 0.
    expect(hits[1]!.score / hits[0]!.score).toBeLessThan(0.01);
    expect(hits[1]!.relevance).toBeGreaterThan(0.2);
    expect(hits[0]!.relevance).toBeGreaterThan(hits[1]!.relevance);
    for (const hit of hits) {
      expect(hit.relevance).toBeGreaterThanOrEqual(0);
      expect(hit.relevance).toBeLessThanOrEqual(1);
    }
  });

  it('the same passage scores the same whatever else is in the result list', async () => {
    await fourDocuments();
    const all = await searchDocuments(store, { query: QUESTION, collection: 'c', k: 4, tenant: 't' });
    const alone = await searchDocuments(store, {
      query: QUESTION,
      collection: 'c',
      k: 4,
      tenant: 't',
      filter: { docId: 'eiffel' },
    });
    expect(alone.map((hit) => hit.chunkId)).toEqual(['eiffel']);
    expect(alone[0]!.relevance).toBe(byId(all, 'eiffel').relevance);
    const withoutBest = await searchDocuments(store, {
      query: QUESTION,
      collection: 'c',
      k: 4,
      tenant: 't',
      filter: { docId: { notIn: ['koechlin'] } },
    });
    expect(byId(withoutBest, 'eiffel').relevance).toBe(byId(all, 'eiffel').relevance);
  });

  it('where a dense model ran, the relevance is the cosine similarity (negative counts as 0)', async () => {
    await fourDocuments();
    const dense = await searchDocuments(store, {
      query: QUESTION,
      collection: 'c',
      k: 4,
      tenant: 't',
      vector: [1, 0, 0],
    });
    expect(byId(dense, 'koechlin').relevance).toBeCloseTo(1, 4);
    expect(byId(dense, 'eiffel').relevance).toBeCloseTo(0.6, 4);
    expect(byId(dense, 'buhl').relevance).toBe(0);
    // Hybrid: fused for the ranking, the cosine for the relevance — also with the weighted-score fusion.
    for (const fusion of [{ method: 'rrf' as const }, { method: 'scores' as const, denseWeight: 0.3 }]) {
      const hybrid = await searchDocuments(store, {
        query: QUESTION,
        collection: 'c',
        k: 4,
        tenant: 't',
        vector: [1, 0, 0],
        fusion,
      });
      expect(byId(hybrid, 'eiffel').relevance).toBeCloseTo(0.6, 4);
      expect(byId(hybrid, 'koechlin').relevance).toBeCloseTo(1, 4);
    }
  });

  it('lexical relevance: means the same for a short and a long question, and word overlap alone never claims 1', () => {
    const passage = 'Maurice Koechlin drew the first sketch of the Eiffel Tower.';
    // Every word of the question in the passage, BM25 about 0 (a tiny collection): 0.8.
    expect(lexicalRelevance('first sketch Eiffel Tower', 1e-6, passage)).toBeCloseTo(0.8, 4);
    // The same BM25 per question word gives the same relevance whatever the question's length.
    const short = lexicalRelevance('sketch tower', 6, 'unrelated words');
    const long = lexicalRelevance('sketch tower engineer drawing', 12, 'unrelated words');
    expect(short).toBeCloseTo(long, 10);
    expect(short).toBeCloseTo(1 - Math.exp(-1), 4);
    expect(lexicalRelevance('the of and', 5, passage)).toBe(0);
  });
});
