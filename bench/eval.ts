/**
 * `npm run eval -- --set <name-or-path>`: end-to-end evaluation of batch document Q&A, as a user runs
 * it. The set is a name under ../shared/eval (`squad-v1.1-dev12`, `hotpotqa-dev-distractor`) or the
 * path of any folder with that layout (`docs/`, `questions.jsonl`); its files are read in place.
 *
 * 1. Redis: REDIS_URL, or a private redis-server in a temporary folder.
 * 2. A worker process of its own (`agentq worker`), configured by the environment (LLM_MODEL unset:
 *    `rag-agent` answers extractively), on fresh key and queue prefixes and a fresh data folder.
 * 3. The set's `docs/` ingested into a fresh collection through the real path (IngestClient → ingest
 *    queue → the worker's parse threads → vector store).
 * 4. The questions submitted as one batch through the same path as `POST /v1/batches`
 *    (`client.batches.submit`): every answer is a `rag-agent` run through the queue.
 * 5. Predictions written as ../shared/eval/README.md says (`cited_doc_ids`: cited documents, then the
 *    run's other retrieved documents), then scored with its score.py (python3).
 *
 * stdout: `runs=<n>`, `steps_per_run=<mean>`, `wall_s=<s>` (submit to last answer), `worker_cpu_s=<s>`
 * and `worker_main_thread_cpu_s=<s>` (the worker process's CPU over that span: every thread, and its
 * event loop's thread alone; Linux), `retrieval=<mode>`, `dense_compared=<n>` (answers whose passage
 * was picked with the local model's sentence comparison),
 * then what users feel (bench/eval/user-metrics.ts): `cited_doc_precision`, `answer_contains_gold`,
 * `answers_citing` and, for the SEC set, `right_company_at_1` (percentages), then score.py's output, last. Progress goes to stderr. Options: `--limit N` (first N questions; scored with
 * --only-predicted), `--concurrency N` (runs in flight, and the worker's step concurrency; default 16),
 * `--out preds.jsonl` (default: a file in a temporary folder, named on stderr), `--outputs outputs.jsonl` (each question's full
 * `rag-agent` output, to read why an answer cites what it cites), `--data-dir DIR` (the worker's
 * AGENTQ_DATA_DIR, kept afterwards) with `--collection NAME` (a collection already ingested there: no
 * ingest, only the questions; to compare the question phase of two versions on the same vectors),
 * `--json results.json` (every figure above as `{set, retrieval, figures}`: what `npm run bench:charts
 * -- --eval results.json` draws for docs/evaluation.md).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentClient } from '../producer/client/agent-client.js';
import { IngestClient } from '../producer/client/ingest-client.js';
import type { BatchResult } from '../shared/operations/batches/batch-schema.js';
import { loadConfig } from '../shared/config/config.js';
import { ID_PATTERN } from '../shared/contracts/ids.js';
import type { RagOutput } from '../shared/retrieval/rag-output.js';
import { startPrivateRedis } from '../shared/redis/private-redis-server.js';
import { citedDocIdsOf, predictionOf } from './eval/eval-prediction.js';
import { readQuestions, resolveEvalSet } from './eval/eval-set.js';
import { cpuSecondsOf, startWorkerProcess, type WorkerProcess } from './eval/start-worker-process.js';
import { DENSE_MATCH_NOTE } from '../worker/agents/rag/dense-sentence-match.js';
import { readGold, secCompanyOf, userMetrics } from './eval/user-metrics.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const sharedEval = resolve(root, '../shared/eval');
const log = (line: string) => process.stderr.write(`${line}\n`);

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  if (index < 0) return undefined;
  const value = process.argv[index + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

function positiveInteger(name: string, fallback: number | undefined): number | undefined {
  const value = option(name);
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new Error(`${name} must be a positive integer, got '${value}'`);
  return number;
}

async function main(): Promise<void> {
  const setArgument = option('--set');
  if (!setArgument)
    throw new Error('usage: npm run eval -- --set <name-or-path> [--limit N] [--concurrency N] [--out preds.jsonl]');
  const set = resolveEvalSet(setArgument, sharedEval);
  const limit = positiveInteger('--limit', undefined);
  const concurrency = positiveInteger('--concurrency', 16)!;
  const questions = readQuestions(set.questionsFile, limit);
  if (questions.length === 0) throw new Error(`${set.questionsFile} holds no questions`);

  const work = mkdtempSync(join(tmpdir(), 'agentq-eval-'));
  const out = resolve(option('--out') ?? join(work, `${set.name}-preds.jsonl`));
  const dataDir = option('--data-dir') === undefined ? undefined : resolve(option('--data-dir')!);
  const reused = option('--collection');
  if (reused !== undefined && dataDir === undefined)
    throw new Error('--collection names a collection already ingested under --data-dir: give both');
  const privateRedis = process.env.REDIS_URL ? undefined : await startPrivateRedis({ dir: work });
  const id = randomBytes(3).toString('hex');
  const env: Record<string, string> = {
    REDIS_URL: process.env.REDIS_URL ?? privateRedis!.url,
    AGENTQ_KEY_PREFIX: `eval${id}`,
    AGENTQ_QUEUE_PREFIX: `evalq${id}`,
    AGENTQ_DATA_DIR: dataDir ?? join(work, 'data'),
    AGENTQ_LOG_LEVEL: 'info',
    AGENTQ_WORKER_CONCURRENCY: process.env.AGENTQ_WORKER_CONCURRENCY ?? String(concurrency),
    // A private redis-server runs without AOF: fine for a measurement that is thrown away afterwards.
    ...(privateRedis ? { AGENTQ_ALLOW_UNSAFE_REDIS: 'true' } : {}),
  };
  const config = loadConfig({ ...process.env, ...env });
  log(
    `eval ${set.name}: ${questions.length} questions, ${config.llmModel ? `model ${config.llmModel}` : 'no LLM_MODEL: extractive answers'}, embeddings ${config.embedProvider === 'openai' ? `openai (${config.embedModel})` : config.embedProvider}, redis ${env.REDIS_URL}${privateRedis ? ' (private)' : ''}`,
  );
  const ingest = new IngestClient({ config });
  const client = new AgentClient({ config });
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorkerProcess(root, env, log);
    const collection = reused ?? `eval-${id}`;
    let lastLog = 0;
    const ingestStarted = performance.now();
    const ingestFigures: { ingest_searchable_s?: number; vectors_ready_s?: number } = {};
    if (reused === undefined) {
      const ingestBatch = await ingest.ingest([set.docsDir], { collection });
      const ingested = await ingest.wait(ingestBatch.batchId, {
        timeoutMs: 60 * 60_000,
        onProgress: (progress) => {
          if (performance.now() - lastLog < 5000) return;
          lastLog = performance.now();
          log(`  ingest ${progress.done + progress.failed}/${progress.total}`);
        },
      });
      log(
        `  ingested ${ingested.done}/${ingested.total} documents (${ingested.failed} failed) in ${((performance.now() - ingestStarted) / 1000).toFixed(1)} s into collection ${collection} (searchable)`,
      );
      ingestFigures.ingest_searchable_s = (performance.now() - ingestStarted) / 1000;
    } else {
      log(`  no ingest: the questions go to collection ${collection} of ${dataDir}`);
    }
    // The questions start once every chunk has its vector (added in the background after ingest): the
    // figures are those of the collection as it stays, not of one half embedded.
    const vectors = await ingest.waitForVectors(collection, {
      timeoutMs: 2 * 60 * 60_000,
      onProgress: ({ added, pending }) => {
        if (performance.now() - lastLog < 5000) return;
        lastLog = performance.now();
        log(`  vectors ${added}/${added + pending}`);
      },
    });
    if (vectors?.vectors && reused === undefined) {
      ingestFigures.vectors_ready_s = (performance.now() - ingestStarted) / 1000;
      log(`  every chunk has its vector ${ingestFigures.vectors_ready_s.toFixed(1)} s after the ingest began`);
    }

    // Batch question ids must be ids (1-128 of [A-Za-z0-9_.-]); a set's own ids are kept in the predictions.
    const batchIds = questions.map((question, index) => (ID_PATTERN.test(question.id) ? question.id : `q${index + 1}`));
    const started = performance.now();
    const cpuBefore = cpuSecondsOf(worker.child.pid);
    const { batch } = await client.batches.submit({
      collection,
      questions: questions.map((question, index) => ({ id: batchIds[index]!, question: question.question })),
      options: { concurrency, graph: 'rag-agent' },
    });
    let record = batch;
    let lastDone = -1;
    while (record.status === 'running') {
      await new Promise((resolveSleep) => setTimeout(resolveSleep, 500));
      record = (await client.batches.get(batch.id)) ?? record;
      const done = record.progress.completed + record.progress.failed + record.progress.cancelled;
      if (done !== lastDone && performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        lastDone = done;
        log(`  answered ${done}/${record.progress.total}`);
      }
    }
    const wallSeconds = (performance.now() - started) / 1000;
    const cpuAfter = cpuSecondsOf(worker.child.pid);
    const results: BatchResult[] = (await client.batches.results(batch.id)) ?? [];
    const failed = results.filter((result) => result.status !== 'completed');
    for (const result of failed.slice(0, 5))
      log(`  question ${result.id} ${result.status}: ${result.error?.code ?? ''} ${result.error?.message ?? ''}`);
    if (failed.length > 0) log(`  ${failed.length} of ${results.length} questions have no answer`);

    const byBatchId = new Map(results.map((result) => [result.id, result]));
    const outputs = questions.map(
      (_question, index) => byBatchId.get(batchIds[index]!)?.output as Partial<RagOutput> | null | undefined,
    );
    const predictions = questions.map((question, index) => predictionOf(question.id, outputs[index]));
    writeFileSync(out, predictions.map((prediction) => JSON.stringify(prediction)).join('\n') + '\n');
    log(`  predictions: ${out}`);
    // The full outputs (answer, sources, retrieved, reasoning), one JSON line per question, for reading why an answer cites what it cites.
    const outputsFile = option('--outputs');
    if (outputsFile)
      writeFileSync(
        resolve(outputsFile),
        questions
          .map((question, index) =>
            JSON.stringify({ id: question.id, question: question.question, output: outputs[index] ?? null }),
          )
          .join('\n') + '\n',
      );

    const records = await Promise.all(results.map((result) => client.get(result.runId)));
    const steps = records.flatMap((run) => (run ? [run.stepCount] : []));
    const score = execFileSync(
      'python3',
      [
        join(sharedEval, 'score.py'),
        '--gold',
        set.questionsFile,
        '--pred',
        out,
        ...(limit === undefined ? [] : ['--only-predicted']),
      ],
      { encoding: 'utf8' },
    );
    process.stdout.write(`runs=${records.filter((run) => run?.status === 'completed').length}\n`);
    process.stdout.write(
      `steps_per_run=${(steps.reduce((sum, count) => sum + count, 0) / Math.max(1, steps.length)).toFixed(2)}\n`,
    );
    process.stdout.write(`wall_s=${wallSeconds.toFixed(1)}\n`);
    // The worker process's CPU over the same span (every thread: steps, searches, the embedding threads): steadier than wall time on a shared machine.
    if (cpuBefore !== undefined && cpuAfter !== undefined) {
      process.stdout.write(`worker_cpu_s=${(cpuAfter.all - cpuBefore.all).toFixed(1)}\n`);
      process.stdout.write(`worker_main_thread_cpu_s=${(cpuAfter.main - cpuBefore.main).toFixed(1)}\n`);
    }
    // The retrieval mode every answer reported (lexical, dense or hybrid), e.g. `retrieval=hybrid` or `retrieval=hybrid:3,lexical:1`.
    const modes = new Map<string, number>();
    for (const result of results) {
      const mode = (result.output as Partial<RagOutput> | null)?.retrieval;
      if (mode) modes.set(mode, (modes.get(mode) ?? 0) + 1);
    }
    process.stdout.write(
      `retrieval=${modes.size === 1 ? [...modes.keys()][0] : [...modes].map(([mode, count]) => `${mode}:${count}`).join(',')}\n`,
    );
    // Answers whose passage was picked with the local model's sentence comparison (AGENTQ_RAG_DENSE_WEIGHT): what its CPU is spent on.
    const compared = results.filter((result) =>
      ((result.output as Partial<RagOutput> | null)?.reasoning_steps ?? []).some((step) =>
        step.startsWith(DENSE_MATCH_NOTE),
      ),
    ).length;
    process.stdout.write(`dense_compared=${compared}\n`);
    // What users feel beside recall: do the cited documents answer the question, does the answer hold the gold one, is it the right company.
    const gold = readGold(set.questionsFile);
    const shown = predictions.map((prediction, index) => ({
      id: prediction.id,
      answer: prediction.answer,
      citedDocIds: citedDocIdsOf(outputs[index]),
      rankedDocIds: prediction.cited_doc_ids,
    }));
    const isSec = [...gold.values()].every((question) =>
      question.goldDocIds.every((docId) => secCompanyOf(docId) !== undefined),
    );
    const metrics = userMetrics(gold, shown, isSec ? { companyOf: secCompanyOf } : {});
    for (const [name, value] of Object.entries(metrics)) process.stdout.write(`${name}=${value.toFixed(1)}\n`);
    process.stdout.write(score.endsWith('\n') ? score : `${score}\n`);
    const jsonFile = option('--json');
    if (jsonFile) {
      // score.py prints its overall figures as `  <name>  <value>` lines.
      const scored = [...score.matchAll(/^ {2}(\S+)\s+(-?\d+(?:\.\d+)?)$/gm)].map(([, name, value]) => [
        name!,
        Number(value),
      ]);
      const retrieval = modes.size === 1 ? [...modes.keys()][0]! : 'mixed';
      const ingestSeconds = Object.fromEntries(
        Object.entries(ingestFigures).map(([name, seconds]) => [name, Number(seconds.toFixed(1))]),
      );
      const figures = {
        ...metrics,
        ...Object.fromEntries(scored),
        wall_s: Number(wallSeconds.toFixed(1)),
        ...ingestSeconds,
      };
      writeFileSync(
        resolve(jsonFile),
        `${JSON.stringify({ at: new Date().toISOString(), command: `npm run eval -- ${process.argv.slice(2).join(' ')}`, set: set.name, retrieval, figures }, null, 2)}\n`,
      );
      log(`  figures: ${resolve(jsonFile)}`);
    }
  } finally {
    await Promise.all([client.close(), ingest.close()]);
    await worker?.stop();
    await privateRedis?.stop();
    if (dataDir === undefined) rmSync(join(work, 'data'), { recursive: true, force: true });
    if (!option('--out')) log(`  (temporary folder ${work} kept for the predictions)`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  log(`eval failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
