/**
 * `npm run bench:ingest`: document ingestion and search on the HotpotQA distractor set (4,858 Markdown
 * documents in ../shared/eval/hotpotqa-dev-distractor/docs, read in place, never copied). Ingests them
 * through the real path (IngestClient → agentq-ingest queue → an `agentq worker` process → embedded
 * SQLite store), then runs the set's 350 questions as searches. Prints `name=value` lines on stdout:
 * ingest_chunks_per_s, ingest_docs_per_s, search_p50_ms, search_p95_ms, and retrieval quality
 * (search_recall_at_5, search_all_at_5, search_mrr: documents ranked by their best chunk) to compare
 * with the plain-BM25 baseline in the set's README. Writes bench/results/ingest-latest.json.
 * Uses REDIS_URL, or starts a private redis-server when it is unset. `--docs <dir>` and
 * `--questions <file>` point elsewhere; `--limit <n>` ingests only the first n documents.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IngestClient } from '../producer/ingest/ingest-client.js';
import { loadConfig } from '../shared/config.js';
import { startPrivateRedis } from '../shared/redis/private-redis-server.js';
import { percentile, round } from './lib/stats.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const argument = (name: string) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const evalSet = join(root, '../shared/eval/hotpotqa-dev-distractor');
const docsDir = argument('--docs') ?? join(evalSet, 'docs');
const questionsFile = argument('--questions') ?? join(evalSet, 'questions.jsonl');
const limit = argument('--limit') === undefined ? undefined : Number(argument('--limit'));
const figures: Record<string, number> = {};
const log = (line: string) => process.stderr.write(`${line}\n`);

function record(name: string, value: number): void {
  figures[name] = round(value);
  log(`  ${name}=${figures[name]}`);
}

/** `agentq worker` as a user runs it; resolves once it logs that it started. */
function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/agentq.ts', 'worker'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error('the worker did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`the worker exited with ${code} before it started`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      if (buffer.includes('agentq worker started')) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(child);
      }
      for (const line of buffer.split('\n').slice(0, -1)) if (/"level":(50|60)/.test(line)) log(`worker: ${line}`);
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
    });
  });
}

interface Question {
  id: string;
  question: string;
  gold_doc_ids: string[];
}

async function main(): Promise<void> {
  if (!existsSync(docsDir)) throw new Error(`${docsDir} does not exist: the eval sets live in ../shared/eval beside the repository (see its README)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'agentq-bench-ingest-'));
  const privateRedis = process.env.REDIS_URL ? undefined : await startPrivateRedis({ dir: dataDir });
  const redisUrl = process.env.REDIS_URL ?? privateRedis!.url;
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `bench${id}`,
    AGENTQ_QUEUE_PREFIX: `benchq${id}`,
    AGENTQ_DATA_DIR: join(dataDir, 'agentq'),
    AGENTQ_LOG_LEVEL: 'info',
  };
  const config = loadConfig({ ...process.env, ...env });
  log(`bench:ingest on ${redisUrl}${privateRedis ? ' (private redis-server)' : ''}; documents from ${relative(root, docsDir)}; chunks of ${config.chunkTokens} tokens (overlap ${config.chunkOverlapTokens}); ${config.ingestConcurrency} parse threads`);
  const worker = await startWorkerProcess(env);
  const client = new IngestClient({ config });
  try {
    const sources = limit === undefined ? [docsDir] : (await import('../producer/ingest/collect-files.js').then(({ collectFiles }) => collectFiles([docsDir]))).slice(0, limit);
    const started = performance.now();
    const batch = await client.ingest(sources, { collection: 'hotpotqa' });
    const queuedMs = performance.now() - started;
    log(`  queued ${batch.total} documents in ${round(queuedMs / 1000, 2)} s`);
    let lastLog = 0;
    const progress = await client.wait(batch.batchId, {
      timeoutMs: 30 * 60_000,
      onProgress: (current) => {
        if (performance.now() - lastLog < 5000) return;
        lastLog = performance.now();
        log(`  ${current.done + current.failed}/${current.total} documents`);
      },
    });
    const seconds = (performance.now() - started) / 1000;
    const chunks = progress.documents.reduce((sum, document) => sum + (document.chunks ?? 0), 0);
    if (progress.failed > 0) log(`  ${progress.failed} documents failed: ${JSON.stringify(progress.documents.filter((document) => document.status === 'failed').slice(0, 3))}`);
    record('ingest_documents', progress.total);
    record('ingest_failed', progress.failed);
    record('ingest_chunks', chunks);
    record('ingest_seconds', seconds);
    record('ingest_docs_per_s', progress.total / seconds);
    record('ingest_chunks_per_s', chunks / seconds);

    const questions = existsSync(questionsFile)
      ? readFileSync(questionsFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Question)
      : [];
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
      if (limit === undefined) {
        record('search_recall_at_5', recall / questions.length);
        record('search_all_at_5', all / questions.length);
        record('search_mrr', reciprocal / questions.length);
      }
    }
  } finally {
    await client.close();
    await new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.kill('SIGTERM');
    });
    await privateRedis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name}=${value}\n`);
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(
    join(root, 'bench/results/ingest-latest.json'),
    `${JSON.stringify({ at: new Date().toISOString(), docs: relative(root, docsDir), limit: limit ?? null, chunkTokens: config.chunkTokens, chunkOverlapTokens: config.chunkOverlapTokens, ingestConcurrency: config.ingestConcurrency, figures }, null, 2)}\n`,
  );
}

await main();
