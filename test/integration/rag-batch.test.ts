import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** Batches of rag-agent runs: cancelling one stops dispatching and cancels the runs in flight. */
describe('rag-agent batches', () => {
  const data = tempDirectory('agentq-rag-batch-');
  let rag: RagTestEnv<TestEnv>;
  let env: TestEnv;

  beforeAll(async () => {
    // A slow model: every answer takes 1.5 s, so a batch's runs are in flight when it is cancelled.
    rag = await startRagTestEnv(startTestEnv, data.path, {
      model: {
        script: () => ({ delayMs: 1500, toolCalls: [{ name: 'search', arguments: { query: 'Eiffel Tower' } }] }),
      },
    });
    ({ env } = rag);
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });

  it('cancel: no more questions are dispatched, the runs in flight end cancelled', async () => {
    const questions = Array.from({ length: 10 }, (_, index) => ({
      question: `Who drew the first sketch of the Eiffel Tower? (${index})`,
    }));
    const { batch } = await env.client.batches.submit({ collection: 'paris', questions, options: { concurrency: 2 } });
    await eventually(async () => ((await env.client.batches.get(batch.id))?.progress.running ?? 0) === 2);
    const cancelled = await env.client.batches.cancel(batch.id);
    expect(cancelled?.status).toBe('cancelled');
    const settled = await eventually(async () => {
      const record = await env.client.batches.get(batch.id);
      return record?.progress.running === 0 ? record : undefined;
    }, 20_000);
    expect(settled.progress).toEqual({ total: 10, queued: 0, running: 0, completed: 0, failed: 0, cancelled: 10 });
    const results = (await env.client.batches.results(batch.id))!;
    const dispatched = await Promise.all(results.map((result) => env.client.get(result.runId)));
    // The two runs in flight exist and were cancelled; the other eight were never started.
    expect(dispatched.filter((run) => run !== null).map((run) => run!.status)).toEqual(['cancelled', 'cancelled']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The first question warmed the prompt cache (its first call answered before the second was dispatched),
    // so it may have sent its next call; each run in flight is at most one call further, none other started.
    expect(rag.server!.chatRequests().length).toBeLessThanOrEqual(3);
  });
});
