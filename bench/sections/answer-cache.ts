/**
 * The `answer-cache` section: the SEC 10-Q questions (../shared/eval/sec10q-docugami, 146; 40 with --quick)
 * asked as one batch with `answerCache: true` by `rag-agent` in model mode (the scripted model: search, then
 * answer citing the first passage shown) on an `agentq worker` process, three times:
 * - first: every question answered (all misses), the answers stored;
 * - again, nothing changed: every question a hit, no model call;
 * - again, after one filing changed (the one most answers cite; a comment appended to its PDF, so its
 *   content hash changes) and re-ingested: the questions citing it miss and are answered again, the others hit.
 * Figures: hits and misses of each pass, model calls of each pass, the questions whose cited sources did
 * not change (hits must equal them), and stale citations — citations of a cached answer naming a document
 * whose content changed since that answer was made (must be 0).
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient } from '../../producer/client/agent-client.js';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { loadConfig } from '../../shared/config/config.js';
import type { BatchResult } from '../../shared/operations/batches/batch-schema.js';
import { startScriptedOpenAIServer } from '../../test/fakes/scripted-openai-server.js';
import { scriptedRagModel } from '../lib/scripted-rag-model.js';
import { readQuestions, resolveEvalSet } from '../eval/eval-set.js';
import { startWorkerProcess, type WorkerProcess } from '../eval/start-worker-process.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SET = 'sec10q-docugami';
const QUICK_QUESTIONS = 40;
const CONCURRENCY = 20;

/** The paths a result's answer cites. */
const citedPaths = (result: BatchResult): string[] =>
  (result.sources as { path: string; cited: boolean }[]).filter((source) => source.cited).map((source) => source.path);

async function runAnswerCache({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  const set = resolveEvalSet(SET, resolve(root, '../shared/eval'));
  const pool = readQuestions(set.questionsFile);
  const questions = pool
    .slice(0, quick ? QUICK_QUESTIONS : pool.length)
    .map((item, index) => ({ id: `q${index + 1}`, question: item.question }));
  const work = mkdtempSync(join(tmpdir(), 'agentq-bench-acache-'));
  // A copy of the filings: the bench changes one of them.
  const docs = join(work, 'docs');
  cpSync(set.docsDir, docs, { recursive: true });
  const model = await startScriptedOpenAIServer({ script: scriptedRagModel(0) });
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `bencha${id}`,
    AGENTQ_QUEUE_PREFIX: `benchaq${id}`,
    AGENTQ_DATA_DIR: join(work, 'data'),
    AGENTQ_LOG_LEVEL: 'info',
    AGENTQ_WORKER_CONCURRENCY: String(CONCURRENCY),
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '10000',
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'bench',
    LLM_MODEL: 'scripted-chat',
    EMBED_MODEL: '',
    EMBED_PROVIDER: 'none',
  };
  const config = loadConfig({ ...process.env, ...env });
  const ingest = new IngestClient({ config });
  const client = new AgentClient({ config });
  let worker: WorkerProcess | undefined;
  const collection = `sec-${id}`;
  const ingestDocs = async () => {
    const done = await ingest.wait((await ingest.ingest([docs], { collection })).batchId, { timeoutMs: 15 * 60_000 });
    if (done.failed > 0) throw new Error(`BENCH_INGEST_FAILED: ${done.failed} of ${done.total} documents failed`);
  };
  const versions = async () =>
    new Map((await ingest.listDocuments({ collection })).map((document) => [document.path, document.contentHash]));
  const ask = async (): Promise<{ results: BatchResult[]; modelCalls: number }> => {
    const before = model.chatRequests().length;
    const { batch } = await client.batches.submit({
      collection,
      questions,
      answerCache: true,
      options: { concurrency: CONCURRENCY },
    });
    while ((await client.batches.get(batch.id))?.status === 'running') await sleep(200);
    const results = (await client.batches.results(batch.id))!;
    const incomplete = results.filter((result) => result.status !== 'completed').length;
    if (incomplete > 0) throw new Error(`BENCH_BATCH_INCOMPLETE: ${incomplete} questions not completed`);
    return { results, modelCalls: model.chatRequests().length - before };
  };
  const hits = (results: BatchResult[]) => results.filter((result) => result.cached !== undefined).length;
  try {
    worker = await startWorkerProcess(root, env, log);
    await ingestDocs();
    log(`${questions.length} questions over ${SET} (${readdirSync(docs).length} filings), answerCache on`);

    const first = await ask();
    const versionsFirst = await versions();
    record('answer_cache_questions', questions.length);
    record('answer_cache_first_hits', hits(first.results));
    record('answer_cache_first_model_calls', first.modelCalls);
    record('answer_cache_uncited_answers', first.results.filter((result) => citedPaths(result).length === 0).length);

    const again = await ask();
    record('answer_cache_unchanged_hits', hits(again.results));
    record('answer_cache_unchanged_model_calls', again.modelCalls);

    // The filing most answers cite changes: a PDF comment after its end, so its bytes (and hash) change.
    const citations = new Map<string, number>();
    for (const result of first.results)
      for (const path of new Set(citedPaths(result))) citations.set(path, (citations.get(path) ?? 0) + 1);
    const [changedPath] = [...citations.entries()].sort((left, right) => right[1] - left[1])[0]!;
    appendFileSync(changedPath.startsWith(docs) ? changedPath : join(docs, changedPath), '\n% revised\n');
    await ingestDocs();
    const versionsNow = await versions();
    if (versionsNow.get(changedPath) === versionsFirst.get(changedPath))
      throw new Error(`BENCH_NOT_CHANGED: ${changedPath} has the same content hash after the change`);
    const unchangedSources = first.results.filter(
      (result) => citedPaths(result).length > 0 && !citedPaths(result).includes(changedPath),
    ).length;

    const changed = await ask();
    const stale = changed.results
      .filter((result) => result.cached !== undefined)
      .flatMap(citedPaths)
      .filter((path) => versionsNow.get(path) !== versionsFirst.get(path)).length;
    record('answer_cache_changed_document_cited_by', citations.get(changedPath)!);
    record('answer_cache_changed_hits', hits(changed.results));
    record('answer_cache_changed_misses', changed.results.length - hits(changed.results));
    record('answer_cache_changed_sources_unchanged', unchangedSources);
    record('answer_cache_changed_model_calls', changed.modelCalls);
    record('answer_cache_stale_citations', stale);
    record('answer_cache_hits_equal_unchanged', hits(changed.results) === unchangedSources ? 1 : 0);
    return figures;
  } finally {
    await worker?.stop();
    await Promise.allSettled([client.close(), ingest.close(), model.close()]);
    rmSync(work, { recursive: true, force: true });
  }
}

export const answerCacheSection: BenchSection = {
  name: 'answer-cache',
  run: runAnswerCache,
};
