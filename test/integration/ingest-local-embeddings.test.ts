import { strToU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import type { RagOutput } from '../../shared/retrieval/rag-output.js';
import { embeddedVectorStorePath } from '../../shared/adapters/create-vector-store.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { embeddedStoreOf } from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const DOCS = {
  'car-care.md':
    '# Automobile maintenance\n\nChange the engine oil every ten thousand kilometres and check the tyre pressure once a month.\n',
  'bread.md': '# Baking\n\nKnead the dough, let it rise for an hour, then bake the loaf at 220 degrees until golden.\n',
  'jupiter.md':
    '# Astronomy notes\n\nJupiter is the largest planet of the solar system; its great red spot is a storm wider than Earth.\n',
  'tokyo.md': '# 東京\n\n東京は日本の首都です。人口は約千四百万人です。\n',
};

/**
 * EMBED_PROVIDER=local, offline end to end: the worker indexes the chunks, then adds their vectors with
 * the built-in model in the background (waited for here), and searches embed the query, so a question that shares no word with its document still finds
 * it through the dense half of the hybrid search.
 */
describe('ingestion and search with the local embedding model (offline)', () => {
  const data = tempDirectory('agentq-local-embed-');
  let env: TestEnv;
  let ingest: IngestClient;

  beforeAll(async () => {
    // The store rag-agent searches is the one ingest writes (a config not read from the environment names it).
    env = await startTestEnv({
      env: { AGENTQ_DATA_DIR: data.path, EMBED_PROVIDER: 'local' },
      services: { vectorStore: embeddedStoreOf(data.path) },
    });
    ingest = new IngestClient({ config: env.config });
    const batch = await ingest.ingest(
      Object.entries(DOCS).map(([name, text]) => ({ name, content: strToU8(text) })),
      { collection: 'notes' },
    );
    const done = await ingest.wait(batch.batchId, { timeoutMs: 60_000 });
    // The Japanese document is ingested too (its words are searchable; its vector means little to an English model).
    expect(done).toMatchObject({ done: 4, failed: 0 });
    // Searchable now; the vectors are added in the background.
    expect(await ingest.waitForVectors('notes', { timeoutMs: 60_000 })).toMatchObject({
      chunks: 4,
      vectors: { added: 4, pending: 0 },
    });
  }, 90_000);
  afterAll(async () => {
    await ingest.close();
    await env.close();
    data.remove();
  });

  it('stores a 512-d vector per chunk', async () => {
    const store = new SqliteVectorStore({ path: embeddedVectorStorePath(env.config) });
    try {
      expect(await store.listCollections(env.config.tenant)).toEqual([
        { name: 'notes', count: 4, dimensions: 512, missingVectors: 0 },
      ]);
    } finally {
      await store.close();
    }
  });

  it('finds documents by meaning when no word of the query is in them (hybrid search)', async () => {
    // Lexically, these queries find neither document.
    const store = new SqliteVectorStore({ path: embeddedVectorStorePath(env.config) });
    try {
      for (const text of ['How should I look after my vehicle?', 'What is the biggest world orbiting the sun?']) {
        const titles = (await store.query(env.config.tenant, { collection: 'notes', text, limit: 4 })).map(
          (hit) => hit.payload.title,
        );
        expect(titles).not.toContain('Automobile maintenance');
        expect(titles).not.toContain('Astronomy notes');
      }
    } finally {
      await store.close();
    }
    const [car] = await ingest.search({ query: 'How should I look after my vehicle?', collection: 'notes', k: 2 });
    expect(car?.title).toBe('Automobile maintenance');
    const [planet] = await ingest.search({
      query: 'What is the biggest world orbiting the sun?',
      collection: 'notes',
      k: 2,
    });
    expect(planet?.title).toBe('Astronomy notes');
    // Lexical matches still count: the fused ranking keeps a document that has the words first.
    const [tokyo] = await ingest.search({ query: '東京', collection: 'notes', k: 2 });
    expect(tokyo?.title).toBe('東京');
  });

  it('a rag-agent run searches hybrid and retrieves the document the question means', async () => {
    const queued = await env.client.enqueue({
      graph: 'rag-agent',
      input: { collection: 'notes', query: 'How should I look after my vehicle?' },
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const output = done.output as RagOutput;
    expect(output.retrieval).toBe('hybrid');
    expect(output.retrieved[0]?.title).toBe('Automobile maintenance');
  });

  it('the extractive answer compares meaning between close passages of one title and says so; AGENTQ_RAG_DENSE_WEIGHT=0 turns it off', async () => {
    const batch = await ingest.ingest(
      [
        {
          name: 'beroida-habitat.md',
          content: strToU8('# Beroida\n\nThe beroids are typically found in coastal waters, near the shore.\n'),
        },
        {
          name: 'beroida-feeding.md',
          content: strToU8('# Beroida\n\nBeroids typically feed on other ctenophores, swallowing them whole.\n'),
        },
        {
          name: 'beroida-body.md',
          content: strToU8('# Beroida\n\nThe body of beroids is a sac with a wide mouth and no tentacles.\n'),
        },
        { name: 'beroida-colour.md', content: strToU8('# Beroida\n\nSome beroids are pink; most are transparent.\n') },
        { name: 'beroida-size.md', content: strToU8('# Beroida\n\nThe largest beroids grow to thirty centimetres.\n') },
      ],
      { collection: 'beroids' },
    );
    expect(await ingest.wait(batch.batchId, { timeoutMs: 60_000 })).toMatchObject({ done: 5, failed: 0 });
    await ingest.waitForVectors('beroids', { timeoutMs: 60_000 });
    const ask = async (env: TestEnv) => {
      const queued = await env.client.enqueue({
        graph: 'rag-agent',
        input: { collection: 'beroids', query: 'What do beroids typically eat?', max_iterations: 1 },
      });
      const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
      expect(done.status).toBe('completed');
      return done.output as RagOutput;
    };
    const output = await ask(env);
    const note = output.reasoning_steps.find((step) => step.startsWith('compared the meaning'));
    // The store already ranks the feeding paragraph first here; the comparison runs (close, one title) and keeps it.
    expect(note).toMatch(
      /^compared the meaning of the 3 best passages' likeliest sentences with the question: "Beroida" \[[0-9a-f]{6}\] stays first$/,
    );
    expect(output.sources[0]?.path).toMatch(/beroida-feeding\.md$/);
    expect(output.answer).toContain('Beroids typically feed on other ctenophores');
    expect(output.retrieved.slice(0, 2).map((document) => document.path.split('/').pop())).toEqual([
      'beroida-feeding.md',
      'beroida-habitat.md',
    ]);
    // Turned off: the words decide.
    const off = await startTestEnv({
      env: { AGENTQ_DATA_DIR: data.path, EMBED_PROVIDER: 'local', AGENTQ_RAG_DENSE_WEIGHT: '0' },
      services: { vectorStore: embeddedStoreOf(data.path) },
    });
    try {
      const lexical = await ask(off);
      expect(lexical.reasoning_steps.some((step) => step.startsWith('compared the meaning'))).toBe(false);
      expect(lexical.sources[0]?.path).toMatch(/beroida-feeding\.md$/);
    } finally {
      await off.close();
    }
  }, 60_000);
});
