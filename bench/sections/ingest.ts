/**
 * The `ingest` section: document ingestion and search on the embedded store, over the HotpotQA
 * distractor set (4,858 Markdown documents in ../shared/eval/hotpotqa-dev-distractor/docs, read in place,
 * never copied). Ingests them through the real path (IngestClient → agentq-ingest queue → an
 * `agentq worker` process → embedded SQLite store), then runs the set's 350 questions as searches.
 * Figures: ingest_chunks_per_s (until searchable), ingest_docs_per_s, ingest_worker_cpu_ms_per_chunk (Linux), search_p50_ms, search_p95_ms, and retrieval quality
 * (search_recall_at_5, search_all_at_5, search_mrr: documents ranked by their best chunk) to compare
 * with the plain-BM25 baseline in the set's README. `--quick` ingests 500 documents and runs 50 searches.
 * Lexical by default (no embedder: the store is measured); `embed: 'local'` (`--embed local`) adds every
 * chunk's vector with the built-in model in the background (vectors_ready_seconds, vectors_per_s), and
 * the searches run once they are all in, so the quality figures are the hybrid search's.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectFiles } from '../../producer/client/collect-files.js';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { startWorkerProcess, type WorkerProcess } from '../eval/start-worker-process.js';
import { measureIngest } from '../lib/measure-ingest.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { percentile } from '../lib/stats.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const evalSet = join(root, '../shared/eval/hotpotqa-dev-distractor');
const QUICK_DOCUMENTS = 500;
const QUICK_QUESTIONS = 50;

export interface IngestSectionOptions {
  /** @default the HotpotQA distractor set's docs/ */
  docsDir?: string;
  /** @default the set's questions.jsonl; searched after the ingest when it exists */
  questionsFile?: string;
  /** Ingest only the first n documents (retrieval quality is then not reported). @default all (500 with --quick) */
  limit?: number;
  /** `none`: lexical; `local`: the built-in embedding model (EMBED_PROVIDER=local). @default 'none' */
  embed?: 'none' | 'local';
  /** Stop waiting for the vectors after this long (`vectors_pending` then says how many were left; no quality figures). @default 2 hours */
  vectorsTimeoutMs?: number;
}

interface Question {
  id: string;
  question: string;
  gold_doc_ids: string[];
}

export function ingestSection({
  docsDir = join(evalSet, 'docs'),
  questionsFile = join(evalSet, 'questions.jsonl'),
  limit,
  embed = 'none',
  vectorsTimeoutMs = 2 * 60 * 60_000,
}: IngestSectionOptions = {}): BenchSection {
  return {
    name: 'ingest',
    run: (context) =>
      runIngest(context, {
        docsDir,
        questionsFile,
        embed,
        vectorsTimeoutMs,
        limit: limit ?? (context.quick ? QUICK_DOCUMENTS : undefined),
      }),
  };
}

async function runIngest(
  { redisUrl, quick, log }: BenchContext,
  {
    docsDir,
    questionsFile,
    limit,
    embed,
    vectorsTimeoutMs,
  }: Required<Omit<IngestSectionOptions, 'limit'>> & { limit: number | undefined },
): Promise<BenchFigures> {
  if (!existsSync(docsDir))
    throw new Error(
      `BENCH_DATA_MISSING: ${docsDir} does not exist: the eval sets live in ../shared/eval beside the repository (see its README)`,
    );
  const { figures, record } = figureRecorder(log);
  const dataDir = mkdtempSync(join(tmpdir(), 'agentq-bench-ingest-'));
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchi${id}`,
    AGENTQ_QUEUE_PREFIX: `benchiq${id}`,
    AGENTQ_DATA_DIR: join(dataDir, 'agentq'),
    // The worker says it started at info level; only its errors are passed on.
    AGENTQ_LOG_LEVEL: 'info',
    // Lexical retrieval unless asked: an embedding endpoint would be measured instead of the store.
    EMBED_MODEL: '',
    EMBED_PROVIDER: embed,
  };
  const config = loadConfig({ ...process.env, ...env });
  log(
    `documents from ${relative(root, docsDir)}${limit === undefined ? '' : ` (first ${limit})`}; chunks of ${config.chunkTokens} tokens (overlap ${config.chunkOverlapTokens}); ${config.ingestConcurrency} parse threads; embeddings: ${embed === 'local' ? `local (${config.localEmbedThreads} thread(s))` : 'none'}`,
  );
  const client = new IngestClient({ config });
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorkerProcess(root, env, log);
    const sources = limit === undefined ? [docsDir] : (await collectFiles([docsDir])).slice(0, limit);
    const measured = await measureIngest(client, worker, sources, 'hotpotqa', log, { vectorsTimeoutMs });
    record('ingest_documents', measured.documents);
    record('ingest_failed', measured.failed);
    record('ingest_chunks', measured.chunks);
    // Until every document is searchable (by its words; vectors, if any, follow in the background).
    record('ingest_seconds', measured.searchableSeconds);
    record('ingest_docs_per_s', measured.documents / measured.searchableSeconds);
    record('ingest_chunks_per_s', measured.chunks / measured.searchableSeconds);
    // The worker process's CPU per chunk (every thread: parsing, embedding, SQLite; Linux): steadier than throughput on a shared machine.
    if (measured.cpuMsPerChunk !== null) record('ingest_worker_cpu_ms_per_chunk', measured.cpuMsPerChunk);
    if (measured.vectorsPending > 0) record('vectors_pending', measured.vectorsPending);
    if (measured.vectorsPerSecond !== null && measured.vectorsReadySeconds !== null) {
      record('vectors_ready_seconds', measured.vectorsReadySeconds);
      record('vectors_per_s', measured.vectorsPerSecond);
      if (measured.cpuMsPerChunkWithVectors !== null)
        record('ingest_worker_cpu_ms_per_chunk_with_vectors', measured.cpuMsPerChunkWithVectors);
    }

    const allQuestions = existsSync(questionsFile)
      ? readFileSync(questionsFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Question)
      : [];
    const questions = quick ? allQuestions.slice(0, QUICK_QUESTIONS) : allQuestions;
    // One search first: opens the store and warms SQLite's page cache, as a running API would have.
    if (questions.length > 0) await client.search({ query: questions[0]!.question, collection: 'hotpotqa', k: 10 });
    const latencies: number[] = [];
    let recall = 0;
    let all = 0;
    let reciprocal = 0;
    for (const question of questions) {
      const before = performance.now();
      const hits = await client.search({ query: question.question, collection: 'hotpotqa', k: 10 });
      latencies.push(performance.now() - before);
      const ranked = [...new Set(hits.map((hit) => basename(hit.path, extname(hit.path))))];
      const top5 = ranked.slice(0, 5);
      const gold = question.gold_doc_ids;
      recall += gold.filter((doc) => top5.includes(doc)).length / gold.length;
      all += gold.every((doc) => top5.includes(doc)) ? 1 : 0;
      const first = ranked.findIndex((doc) => gold.includes(doc));
      reciprocal += first < 0 ? 0 : 1 / (first + 1);
    }
    if (questions.length > 0) {
      record('search_queries', questions.length);
      record('search_p50_ms', percentile(latencies, 50));
      record('search_p95_ms', percentile(latencies, 95));
      // Quality needs every gold document indexed (and, with an embedder, every vector in).
      if (limit === undefined && measured.vectorsPending === 0) {
        record('search_recall_at_5', recall / questions.length);
        record('search_all_at_5', all / questions.length);
        record('search_mrr', reciprocal / questions.length);
      }
    }
  } finally {
    await client.close();
    await worker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return figures;
}
