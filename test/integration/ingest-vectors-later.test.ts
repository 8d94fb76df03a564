import { strToU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import type { RagOutput } from '../../shared/retrieval/rag-output.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker, type AgentWorker } from '../../worker/start-worker.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { embeddedStoreOf } from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const NOTES = {
  'okapi.md': '# Okapi\n\nThe okapi lives in the rainforest of the Congo.\n',
  'tundra.md': '# Tundra\n\nReindeer cross the frozen tundra every winter.\n',
  'comets.md': '# Comets\n\nA comet grows a tail of gas and dust near the sun.\n',
};

/** The texts the embedding endpoint was asked for, one entry per time each was embedded. */
function embeddedTexts(server: ScriptedOpenAIServer): string[] {
  return server.embeddingRequests().flatMap((request) => (request.body as { input: string[] }).input);
}

/**
 * A document is searchable as soon as its chunks are written; its vectors come afterwards,
 * in the background, and every chunk is embedded once. The embedding endpoint is held shut here (its
 * answers wait on a gate) to show that the ingest does not wait for it.
 */
describe('vectors added in the background after ingest', () => {
  const data = tempDirectory();
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let second: AgentWorker | undefined;
  let ingest: IngestClient;
  let open: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (open = resolve));
  const queries = new Set<string>();

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      embeddingDimensions: 32,
      // Chunks wait for the gate; a search's query is answered at once.
      embeddingsScript: async (request) => {
        const input = (request.body as { input: string[] }).input;
        if (!input.every((text) => queries.has(text))) await gate;
        return undefined;
      },
    });
    // The store rag-agent searches is the one ingest writes (a config not read from the environment names it).
    env = await startTestEnv({
      env: { AGENTQ_DATA_DIR: data.path, EMBED_MODEL: 'scripted-embedding', OPENAI_BASE_URL: server.url },
      services: { vectorStore: embeddedStoreOf(data.path) },
    });
    ingest = new IngestClient({ config: env.config });
  });
  afterAll(async () => {
    open();
    await ingest.close();
    await second?.close();
    await env.close();
    await server.close();
    data.remove();
  });

  it('reports the documents indexed and searchable while no vector exists yet, then adds each chunk’s vector once', async () => {
    const batch = await ingest.ingest(
      Object.entries(NOTES).map(([name, text]) => ({ name, content: strToU8(text) })),
      { collection: 'notes' },
    );
    // Finished while the embedding endpoint answers nothing: the ingest did not wait for vectors.
    expect(await ingest.wait(batch.batchId, { timeoutMs: 15_000 })).toMatchObject({ done: 3, failed: 0 });
    expect(await ingest.collection('notes')).toEqual({
      name: 'notes',
      chunks: 3,
      dimensions: null,
      vectors: { added: 0, pending: 3 },
    });
    // Searchable by its words; no vector yet, so the query is not even embedded.
    const [okapi] = await ingest.search({ query: 'okapi rainforest', collection: 'notes', k: 1 });
    expect(okapi?.title).toBe('Okapi');
    const queued = await env.client.enqueue({
      graph: 'rag-agent',
      input: { collection: 'notes', query: 'Where does the okapi live?', max_iterations: 1 },
    });
    const answered = await env.client.wait(queued.id, { timeoutMs: 20_000 });
    expect(answered.status).toBe('completed');
    expect((answered.output as RagOutput).retrieval).toBe('lexical');
    expect((answered.output as RagOutput).retrieved[0]?.title).toBe('Okapi');

    open();
    expect(await ingest.waitForVectors('notes', { timeoutMs: 20_000 })).toEqual({
      name: 'notes',
      chunks: 3,
      dimensions: 32,
      vectors: { added: 3, pending: 0 },
    });
    expect(embeddedTexts(server).sort()).toEqual([
      'A comet grows a tail of gas and dust near the sun.',
      'Reindeer cross the frozen tundra every winter.',
      'The okapi lives in the rainforest of the Congo.',
    ]);
    // Now hybrid: the query is embedded as well.
    queries.add('frozen reindeer');
    const [tundra] = await ingest.search({ query: 'frozen reindeer', collection: 'notes', k: 1 });
    expect(tundra?.title).toBe('Tundra');
    expect(embeddedTexts(server)).toContain('frozen reindeer');
    expect(await ingest.collections()).toEqual([await ingest.collection('notes')]);
  }, 60_000);

  it('two workers share a collection’s vectors: one at a time, every chunk embedded once', async () => {
    gate = Promise.resolve();
    second = await startWorker({ config: env.config, logger: createLogger('silent'), reconciler: false });
    const before = embeddedTexts(server).length;
    const documents = Array.from({ length: 40 }, (_, index) => ({
      name: `field-note-${index}.md`,
      content: strToU8(`# Field note ${index}\n\nMarker ${index} records a heron beside pond number ${index * 7}.\n`),
    }));
    const batch = await ingest.ingest(documents, { collection: 'field' });
    expect(await ingest.wait(batch.batchId, { timeoutMs: 30_000 })).toMatchObject({ done: 40, failed: 0 });
    expect(await ingest.waitForVectors('field', { timeoutMs: 30_000 })).toMatchObject({
      vectors: { added: 40, pending: 0 },
    });
    const embedded = embeddedTexts(server).slice(before);
    expect(embedded).toHaveLength(40);
    expect(new Set(embedded).size).toBe(40);
  }, 60_000);
});
