import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { embeddedVectorStorePath } from '../../shared/adapters/create-vector-store.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';

const DOCUMENTS = 40;

/** A document of several chunks, each sentence with a word no other document has. */
function document(index: number): string {
  const paragraphs = Array.from(
    { length: 4 },
    (_, paragraph) =>
      `Ledger ${index} entry ${paragraph} lists tag${index}x${paragraph} among ${['otters', 'voles', 'kestrels', 'newts'][paragraph]} counted at station ${index * 10 + paragraph}, with notes on weather, water level and the observers on duty that morning.`,
  );
  return `# Ledger ${index}\n\n${paragraphs.join('\n\n')}\n`;
}

/**
 * Bad input: a worker is SIGKILLed while it adds a collection's vectors in the background.
 * Meanwhile searches answer (chunks without a vector by their words), never fail; after a restart the
 * worker carries on where the store says it stopped: every chunk ends with its vector, the chunks that
 * were still without one at the kill are embedded exactly once after it, and nothing else is.
 */
describe('chaos: a worker killed while it adds vectors', () => {
  const data = tempDirectory();
  let server: ScriptedOpenAIServer;
  let worker: ChildProcess | undefined;
  const queries = new Set<string>();
  const config = testConfig({
    AGENTQ_DATA_DIR: data.path,
    EMBED_MODEL: 'scripted-embedding',
    AGENTQ_CHUNK_TOKENS: '48',
    AGENTQ_CHUNK_OVERLAP_TOKENS: '0',
  });
  afterAll(async () => {
    if (worker) await killHard(worker);
    await server?.close();
    data.remove();
  });

  it('resumes after a restart: none lost, none embedded twice once it runs again, searches answer throughout', async () => {
    // Every chunk request takes a while, so the kill lands mid-way; a search's query is answered at once.
    server = await startScriptedOpenAIServer({
      embeddingDimensions: 16,
      embeddingsScript: (request) => {
        const input = (request.body as { input: string[] }).input;
        return input.every((text) => queries.has(text)) ? undefined : { delayMs: 150 };
      },
    });
    const env: Record<string, string> = {
      REDIS_URL: config.redisUrl!,
      AGENTQ_KEY_PREFIX: config.keyPrefix,
      AGENTQ_QUEUE_PREFIX: config.queuePrefix,
      AGENTQ_DATA_DIR: data.path,
      AGENTQ_CHUNK_TOKENS: '48',
      AGENTQ_CHUNK_OVERLAP_TOKENS: '0',
      AGENTQ_LOG_LEVEL: 'error',
      EMBED_PROVIDER: 'openai',
      EMBED_MODEL: 'scripted-embedding',
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: 'test',
      AGENTQ_EMBED_BATCH_SIZE: '8',
      // A killed worker's lease on the collection lapses after 5 × 500 ms.
      AGENTQ_LIVENESS_INTERVAL_MS: '200',
      AGENTQ_LIVENESS_TTL_MS: '500',
    };
    const client = new IngestClient({
      config: { ...config, openaiBaseUrl: server.url, openaiApiKey: 'test', embedBatchSize: 8 },
    });
    const store = new SqliteVectorStore({ path: embeddedVectorStorePath(config) });
    try {
      worker = await spawnWorker('test/chaos/chain-worker.ts', env);
      const batch = await client.ingest(
        Array.from({ length: DOCUMENTS }, (_, index) => ({
          name: `ledger-${index}.md`,
          content: new TextEncoder().encode(document(index)),
        })),
        { collection: 'ledgers' },
      );
      const done = await client.wait(batch.batchId, { timeoutMs: 60_000 });
      expect(done).toMatchObject({ done: DOCUMENTS, failed: 0 });
      const chunks = (await client.collection('ledgers'))!.chunks;
      expect(chunks).toBeGreaterThan(64 * 2); // more than two pages of the builder

      // Killed once some vectors are in and many are not.
      await eventually(
        async () => {
          const vectors = (await client.collection('ledgers'))?.vectors;
          return vectors && vectors.added >= 16 && vectors.pending >= 64;
        },
        30_000,
        'some vectors added, many pending',
      );
      await killHard(worker);
      const killedAt = Date.now();
      const pendingAtKill = (await store.pendingVectors('default', 'ledgers', { limit: 1000 })).map(
        (record) => record.text,
      );
      expect(pendingAtKill.length).toBeGreaterThan(0);
      expect(pendingAtKill.length).toBeLessThan(chunks);

      // No worker: searches still answer, hybrid over the chunks with a vector and by words over the rest.
      const pendingWord = /tag\d+x\d+/.exec(pendingAtKill[pendingAtKill.length - 1]!)![0];
      for (const query of [`which ledger lists ${pendingWord}`, 'otters counted at the station']) {
        queries.add(query);
        const hits = await client.search({ query, collection: 'ledgers', k: 5 });
        expect(hits.length).toBeGreaterThan(0);
        if (query.includes(pendingWord)) expect(hits[0]!.text).toContain(pendingWord);
      }

      const restartedAt = Date.now();
      worker = await spawnWorker('test/chaos/chain-worker.ts', env);
      expect(await client.waitForVectors('ledgers', { timeoutMs: 60_000 })).toMatchObject({
        chunks,
        vectors: { added: chunks, pending: 0 },
      });
      expect(await store.pendingVectors('default', 'ledgers', { limit: 10 })).toEqual([]);

      const embedded = (after: number) =>
        server
          .embeddingRequests()
          .filter((request) => request.receivedAt >= after)
          .flatMap((request) => (request.body as { input: string[] }).input)
          .filter((text) => !queries.has(text));
      // After the restart: exactly the chunks that had no vector at the kill, each once.
      const resumed = embedded(restartedAt);
      expect(resumed.slice().sort()).toEqual(pendingAtKill.slice().sort());
      expect(embedded(killedAt).length).toBe(resumed.length); // and nobody embedded anything while no worker ran
      // Over the whole run, only the page in hand at the kill (≤ 64 chunks) was embedded twice.
      const all = embedded(0);
      expect(new Set(all).size).toBe(chunks);
      expect(all.length - chunks).toBeLessThanOrEqual(64);
    } finally {
      await store.close();
      await client.close();
    }
  }, 180_000);
});
