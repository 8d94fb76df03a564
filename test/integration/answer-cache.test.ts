import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchResult } from '../../shared/operations/batches/batch-schema.js';
import { citeBestPassage } from '../helpers/cite-best-passage.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const OTHER_TENANT = 'other-tenant';

/** One question per document of the Paris collection (which document each answer cites is read from its sources). */
const QUESTIONS = [
  'Who drew the first sketch of the Eiffel Tower?',
  'When was the Eiffel Tower completed?',
  'Where is Buhl?',
  "What is the world's most-visited art museum?",
  'On which bank of the Seine does the Louvre stand?',
  'When did the spire of Notre-Dame collapse?',
].map((question) => ({ question }));

/**
 * The answer cache (a batch's `answerCache`, a run's `answer_cache`): a real worker, Redis, embedded store
 * and the scripted model through the openai SDK.
 */
describe('answer cache', () => {
  const data = tempDirectory('agentq-answer-cache-');
  let rag: RagTestEnv<TestEnv>;
  let env: TestEnv;
  let folder: string;

  beforeAll(async () => {
    rag = await startRagTestEnv(startTestEnv, data.path, { model: { script: citeBestPassage } });
    ({ env } = rag);
    folder = writeDocs(data.path, 'paris', RAG_DOCS);
    await ingestFolder(rag.ingest, folder, { collection: 'paris' });
    await ingestFolder(rag.ingest, folder, { collection: 'paris', tenant: OTHER_TENANT });
  }, 120_000);
  afterAll(async () => {
    await rag?.close();
    data.remove();
  });

  const modelCalls = () => rag.server!.chatRequests().length;

  async function askBatch(answerCache: boolean, tenant?: string): Promise<BatchResult[]> {
    const { batch } = await env.client.batches.submit(
      { collection: 'paris', questions: QUESTIONS, answerCache, options: { concurrency: 3 } },
      tenant ? { tenant } : {},
    );
    await eventually(async () => (await env.client.batches.get(batch.id))?.status === 'completed', 60_000);
    const results = (await env.client.batches.results(batch.id))!;
    expect(results.map((result) => result.status)).toEqual(QUESTIONS.map(() => 'completed'));
    return results;
  }

  /** The paths a result's answer cites. */
  const citedPaths = (result: BatchResult) =>
    (result.sources as { path: string; cited: boolean }[])
      .filter((source) => source.cited)
      .map((source) => source.path);

  /** Content hash of each document of the collection, by path. */
  async function versions(tenant?: string): Promise<Map<string, string>> {
    const documents = await rag.ingest.listDocuments({ collection: 'paris', ...(tenant ? { tenant } : {}) });
    return new Map(documents.map((document) => [document.path, document.contentHash ?? '']));
  }

  let first: BatchResult[];
  let versionsAtFirst: Map<string, string>;

  it('a batch asked twice answers the second time from the cache: no model call, the cached marks in the results and the run records, 0 cost', async () => {
    first = await askBatch(true);
    versionsAtFirst = await versions();
    expect(first.every((result) => result.cached === undefined)).toBe(true);
    expect(first.every((result) => citedPaths(result).length === 1)).toBe(true);
    const before = modelCalls();

    const second = await askBatch(true);
    expect(modelCalls()).toBe(before);
    for (const [index, result] of second.entries()) {
      expect(result.cached).toEqual({ from: first[index]!.runId, at: expect.any(String) });
      expect(result.answer).toBe(first[index]!.answer);
      expect(result.sources).toEqual(first[index]!.sources);
      const run = (await env.client.get(result.runId))!;
      expect(run.status).toBe('completed');
      expect(run.cached).toEqual(result.cached);
      expect(run.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
      // The run that made the answer is not marked.
      expect((await env.client.get(first[index]!.runId))!.cached).toBeUndefined();
    }
  });

  it('opt-in: a batch without answerCache answers every question afresh', async () => {
    const before = modelCalls();
    const results = await askBatch(false);
    expect(results.every((result) => result.cached === undefined)).toBe(true);
    // Two model calls per question: the search decision and the answer.
    expect(modelCalls() - before).toBe(2 * QUESTIONS.length);
  });

  it('per tenant: another tenant asking the same questions of its own copy never hits', async () => {
    const before = modelCalls();
    const results = await askBatch(true, OTHER_TENANT);
    expect(results.every((result) => result.cached === undefined)).toBe(true);
    expect(modelCalls() - before).toBe(2 * QUESTIONS.length);
  });

  it('one document changed: exactly the questions citing it are answered again, the others hit, no hit cites a stale source', async () => {
    const changed = 'louvre.md';
    const citing = first.filter((result) => citedPaths(result).some((path) => path.endsWith(changed)));
    expect(citing.length).toBeGreaterThan(0);
    expect(citing.length).toBeLessThan(QUESTIONS.length);
    writeFileSync(
      join(folder, changed),
      "# Louvre\n\nThe Louvre is the world's most-visited art museum, a former royal palace. It stands on the Right Bank of the Seine in Paris, in the 1st arrondissement.\n",
    );
    await ingestFolder(rag.ingest, folder, { collection: 'paris' });
    const now = await versions();
    expect(now.get([...now.keys()].find((path) => path.endsWith(changed))!)).not.toBe(
      versionsAtFirst.get([...versionsAtFirst.keys()].find((path) => path.endsWith(changed))!),
    );
    const before = modelCalls();

    const third = await askBatch(true);
    const missed = third.filter((result) => result.cached === undefined).map((result) => result.question);
    expect(missed.sort()).toEqual(citing.map((result) => result.question).sort());
    expect(modelCalls() - before).toBe(2 * citing.length);
    for (const result of third) {
      for (const path of citedPaths(result)) {
        // Every citation names a document of the collection as it is now…
        expect(now.has(path)).toBe(true);
        // …and a cached answer's citations name documents unchanged since the answer was made.
        if (result.cached) expect(now.get(path)).toBe(versionsAtFirst.get(path));
      }
    }

    // The new answers replaced the stale entries: asked again, every question hits.
    const fourth = await askBatch(true);
    expect(modelCalls() - before).toBe(2 * citing.length);
    for (const [index, result] of fourth.entries())
      expect(result.cached?.from).toBe(third[index]!.cached?.from ?? third[index]!.runId);
  });

  it('a single run asks for it with answer_cache in its input; a conversation turn never hits', async () => {
    const input = { query: QUESTIONS[2]!.question.toUpperCase() + '  ', collection: 'paris', answer_cache: true };
    const before = modelCalls();
    const record = await env.client.enqueue({ graph: 'rag-agent', input });
    const done = await env.client.wait(record.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    // The question normalised (case, white space) is the batch's.
    expect(done.cached).toEqual({ from: expect.any(String), at: expect.any(String) });
    expect(modelCalls()).toBe(before);
    const turn = await env.client.enqueue({ graph: 'rag-agent', input, conversationId: 'answer-cache-c1' });
    const answered = await env.client.wait(turn.id, { timeoutMs: 30_000 });
    expect(answered.status).toBe('completed');
    expect(answered.cached).toBeUndefined();
    expect(modelCalls()).toBeGreaterThan(before);
  });

  it('clearing the cache (of the collection, of every collection): the next batch answers afresh, and hits again after', async () => {
    for (const clear of [{ collection: 'paris' }, {}]) {
      // Another collection's clear leaves this one's answers.
      await env.client.clearAnswerCache({ collection: 'rome' });
      expect((await askBatch(true)).every((result) => result.cached !== undefined)).toBe(true);
      await env.client.clearAnswerCache(clear);
      const before = modelCalls();
      expect((await askBatch(true)).every((result) => result.cached === undefined)).toBe(true);
      expect(modelCalls() - before).toBe(2 * QUESTIONS.length);
    }
    expect((await askBatch(true)).every((result) => result.cached !== undefined)).toBe(true);
  });
});
