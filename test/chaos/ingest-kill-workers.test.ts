import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { SqliteVectorStore } from '../../shared/adapters/sqlite/sqlite-vector-store.js';
import { chunkDocument } from '../../worker/ingest/chunker.js';
import { embeddedVectorStorePath } from '../../shared/adapters/create-vector-store.js';
import { parseDocument } from '../../worker/ingest/parsers/parse-document.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';

const DOCUMENTS = 1000;
const WORKERS = 2;
const CHUNK_TOKENS = 80;

/** A document with a word no other document has (`uniqN`), several sections and enough text to take a moment. */
function document(index: number): string {
  const sections = Array.from({ length: 6 }, (_, section) => {
    const sentences = Array.from(
      { length: 14 },
      (_, sentence) =>
        `Observation ${sentence} of section ${section} notes ${['otters', 'voles', 'kestrels', 'newts'][(index + sentence) % 4]} near marker ${index * 100 + sentence}.`,
    );
    return `## Section ${section}\n\n${sentences.slice(0, 7).join(' ')}\n\n${sentences.slice(7).join(' ')}`;
  });
  return `# Survey ${index}\n\nThis survey is tagged uniq${index} for the audit.\n\n${sections.join('\n\n')}\n`;
}

/**
 * Ingestion under fire: real worker processes are SIGKILLed while 1,000 documents are being indexed, and
 * restarted. Every document must end indexed exactly once: its record `indexed` with the chunk count its
 * content gives, exactly that many chunks in the store (no duplicate, none missing), its result recorded
 * once, and the batch counting each document once.
 */
describe('chaos: ingest workers killed with SIGKILL mid-batch', () => {
  const data = tempDirectory();
  const files = tempDirectory('agentq-chaos-docs-');
  const config = testConfig({
    AGENTQ_DATA_DIR: data.path,
    AGENTQ_CHUNK_TOKENS: String(CHUNK_TOKENS),
    AGENTQ_CHUNK_OVERLAP_TOKENS: '10',
  });
  const env: Record<string, string> = {
    REDIS_URL: config.redisUrl!,
    AGENTQ_KEY_PREFIX: config.keyPrefix,
    AGENTQ_QUEUE_PREFIX: config.queuePrefix,
    AGENTQ_DATA_DIR: data.path,
    AGENTQ_CHUNK_TOKENS: String(CHUNK_TOKENS),
    AGENTQ_CHUNK_OVERLAP_TOKENS: '10',
    AGENTQ_INGEST_CONCURRENCY: '2',
    AGENTQ_LOG_LEVEL: 'error',
    EMBED_PROVIDER: 'none',
  };
  const client = new IngestClient({ config });
  const workers: (ChildProcess | undefined)[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker && killHard(worker)));
    await client.close();
    data.remove();
    files.remove();
  });

  it('every document is indexed exactly once, whatever is killed when', async () => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
    let state = seed;
    const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    console.log(`ingest chaos seed=${seed} (CHAOS_SEED=${seed} reproduces the kill schedule)`);

    const directory = join(files.path, 'surveys');
    mkdirSync(directory);
    for (let index = 0; index < DOCUMENTS; index += 1)
      writeFileSync(join(directory, `survey-${String(index).padStart(4, '0')}.md`), document(index));
    for (let index = 0; index < WORKERS; index += 1) workers.push(await spawnWorker('test/chaos/chain-worker.ts', env));
    const batch = await client.ingest([directory], { collection: 'surveys' });

    // Kill a worker each time the batch has moved on, while it is not finished (at most 60 s).
    let kills = 0;
    let lastFinished = 0;
    const restarts: Promise<unknown>[] = [];
    const killUntil = Date.now() + 60_000;
    while (Date.now() < killUntil) {
      await new Promise((resolve) => setTimeout(resolve, 200 + random() * 600));
      const progress = await client.progress(batch.batchId);
      const finished = (progress?.done ?? 0) + (progress?.failed ?? 0);
      if (progress?.finished) break;
      if (finished === lastFinished) continue;
      const victim = Math.floor(random() * WORKERS);
      const worker = workers[victim];
      if (!worker) continue; // still restarting from an earlier kill
      lastFinished = finished;
      workers[victim] = undefined;
      await killHard(worker);
      kills += 1;
      console.log(`ingest chaos kill #${kills}: worker ${victim} at ${finished}/${DOCUMENTS}`);
      // Restarted in the background (a process start-up of a second or more): the other worker may be killed meanwhile.
      restarts.push(spawnWorker('test/chaos/chain-worker.ts', env).then((spawned) => (workers[victim] = spawned)));
    }
    await Promise.all(restarts);

    const progress = await client.wait(batch.batchId, { timeoutMs: 120_000 });
    // A kill does not wait for its worker's restart, so a batch that now indexes fast still sees at least
    // two kills mid-batch (both workers may be down at once; the batch waits for them).
    expect(kills).toBeGreaterThanOrEqual(2);
    expect(progress).toMatchObject({ total: DOCUMENTS, done: DOCUMENTS, failed: 0, finished: true });
    expect(progress.documents.map((document) => document.item)).toEqual([...Array(DOCUMENTS).keys()]);

    const store = new SqliteVectorStore({ path: embeddedVectorStorePath(config) });
    const problems: string[] = [];
    const records = await client.listDocuments({ collection: 'surveys' });
    expect(records).toHaveLength(DOCUMENTS);
    let expectedTotal = 0;
    for (const record of records) {
      const parsed = await parseDocument(readFileSync(record.path), record.path);
      const expected = chunkDocument(parsed, { maxTokens: CHUNK_TOKENS, overlapTokens: 10 }).chunks.length;
      expectedTotal += expected;
      const stored = await store.count(config.tenant, { collection: 'surveys', filter: { docId: record.id } });
      if (record.status !== 'indexed')
        problems.push(`${record.path}: ${record.status} ${JSON.stringify(record.error)}`);
      if (record.chunkCount !== expected || stored !== expected)
        problems.push(
          `${record.path}: record says ${record.chunkCount} chunks, store has ${stored}, content gives ${expected}`,
        );
      const index = Number(/survey-(\d+)/.exec(record.path)![1]);
      const hits = await store.query(config.tenant, { collection: 'surveys', text: `uniq${index}`, limit: 10 });
      if (hits.length !== 1 || hits[0]!.payload.docId !== record.id)
        problems.push(`${record.path}: uniq${index} found ${hits.length} times`);
    }
    expect(await store.count(config.tenant, { collection: 'surveys' })).toBe(expectedTotal);
    await store.close();
    expect(problems).toEqual([]);
  }, 240_000);
});
