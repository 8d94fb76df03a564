import { strToU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { embeddedVectorStorePath } from '../../shared/adapters/create-vector-store.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { embedText, startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** With EMBED_MODEL set, chunks are stored with dense vectors and searches fuse lexical and dense ranks. */
describe('ingestion with an embedder (scripted OpenAI-compatible server)', () => {
  const data = tempDirectory();
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let ingest: IngestClient;

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ embeddingDimensions: 32 });
    env = await startTestEnv({
      env: { AGENTQ_DATA_DIR: data.path, EMBED_MODEL: 'scripted-embedding', OPENAI_BASE_URL: server.url },
    });
    ingest = new IngestClient({ config: env.config });
  });
  afterAll(async () => {
    await ingest.close();
    await env.close();
    await server.close();
    data.remove();
  });

  it('stores a vector per chunk and answers dense and hybrid queries', async () => {
    const batch = await ingest.ingest(
      [
        { name: 'okapi.md', content: strToU8('# Okapi\n\nThe okapi lives in the rainforest of the Congo.\n') },
        { name: 'tundra.md', content: strToU8('# Tundra\n\nReindeer cross the frozen tundra every winter.\n') },
      ],
      { collection: 'dense' },
    );
    expect((await ingest.wait(batch.batchId)).done).toBe(2);
    // Searchable at once; the vectors follow in the background, each chunk embedded once.
    expect(await ingest.waitForVectors('dense', { timeoutMs: 20_000 })).toMatchObject({
      chunks: 2,
      dimensions: 32,
      vectors: { added: 2, pending: 0 },
    });
    const embedded = server.embeddingRequests().flatMap((request) => (request.body as { input: string[] }).input);
    expect(embedded.sort()).toEqual([
      'Reindeer cross the frozen tundra every winter.',
      'The okapi lives in the rainforest of the Congo.',
    ]);

    const store = new SqliteVectorStore({ path: embeddedVectorStorePath(env.config) });
    expect(await store.listCollections(env.config.tenant)).toEqual([
      { name: 'dense', count: 2, dimensions: 32, missingVectors: 0 },
    ]);
    const [nearest] = await store.query(env.config.tenant, {
      collection: 'dense',
      vector: embedText('reindeer tundra winter', 32),
      limit: 1,
    });
    expect(nearest?.payload.title).toBe('Tundra');
    await store.close();

    const before = server.embeddingRequests().length;
    const hits = await ingest.search({ query: 'okapi rainforest', collection: 'dense', k: 2 });
    expect(server.embeddingRequests().length).toBe(before + 1); // the query was embedded
    expect(hits[0]?.title).toBe('Okapi');
    // Fused scores: Σ 1/(60 + rank) over the two rankings.
    expect(hits[0]!.score).toBeCloseTo(2 / 61, 5);
  });
});
