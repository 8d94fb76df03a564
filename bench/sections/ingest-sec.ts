/**
 * The `ingest-sec` section: how soon the 20 SEC 10-Q filings of ../shared/eval/sec10q-docugami (PDF,
 * 1,035 pages) are searchable, ingested twice side by side in one run — lexically (EMBED_PROVIDER=none)
 * and with the default settings (the local model's vectors added in the background) — each through the
 * real path (IngestClient → agentq-ingest queue → its own `agentq worker` process → a fresh embedded store).
 *
 * Figures, per mode (`sec_lexical_…`, `sec_default_…`): `_searchable_s` (every filing indexed, searchable
 * by its words), `_ingest_chunks_per_s` (chunks / searchable_s), `_worker_cpu_ms_per_chunk`;
 * for the default mode also `_vectors_ready_s` (every chunk has its vector), `_vectors_per_s` and
 * `_end_to_end_chunks_per_s` (chunks / vectors_ready_s); and `sec_searchable_vs_lexical` (default ÷
 * lexical time to searchable: the goal is ≤ 2).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { startWorkerProcess, type WorkerProcess } from '../eval/start-worker-process.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { measureIngest } from '../lib/measure-ingest.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SEC_DOCS = join(root, '../shared/eval/sec10q-docugami/docs');

export interface IngestSecOptions {
  /** @default the set's docs/ */
  docsDir?: string;
  /** Stop waiting for the vectors after this long (then `sec_default_vectors_pending` says how many were left). @default 2 hours */
  vectorsTimeoutMs?: number;
}

export function ingestSecSection({ docsDir = SEC_DOCS, vectorsTimeoutMs }: IngestSecOptions = {}): BenchSection {
  return { name: 'ingest-sec', run: (context) => runIngestSec(context, docsDir, vectorsTimeoutMs) };
}

async function runIngestSec(
  { redisUrl, log }: BenchContext,
  docsDir: string,
  vectorsTimeoutMs: number | undefined,
): Promise<BenchFigures> {
  if (!existsSync(docsDir))
    throw new Error(
      `BENCH_DATA_MISSING: ${docsDir} does not exist: the eval sets live in ../shared/eval beside the repository (see its README)`,
    );
  const { figures, record } = figureRecorder(log);
  const searchable: Record<string, number> = {};
  for (const mode of ['lexical', 'default'] as const) {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentq-bench-sec-'));
    const id = randomBytes(3).toString('hex');
    const env = {
      REDIS_URL: redisUrl,
      AGENTQ_KEY_PREFIX: `benchs${id}`,
      AGENTQ_QUEUE_PREFIX: `benchsq${id}`,
      AGENTQ_DATA_DIR: join(dataDir, 'agentq'),
      AGENTQ_LOG_LEVEL: 'info',
      EMBED_MODEL: '',
      // The default is the local model; lexical is what the target compares with.
      EMBED_PROVIDER: mode === 'lexical' ? 'none' : 'local',
    };
    const config = loadConfig({ ...process.env, ...env });
    log(
      `SEC filings, ${mode}: ${config.ingestConcurrency} parse threads${mode === 'default' ? `; vectors by the local model in the background (${config.localEmbedBackgroundThreads} low-priority threads, leading ${config.localEmbedDocumentTokens} tokens)` : ''}`,
    );
    const client = new IngestClient({ config });
    let worker: WorkerProcess | undefined;
    try {
      worker = await startWorkerProcess(root, env, log);
      const measured = await measureIngest(client, worker, [docsDir], 'sec', log, {
        ...(vectorsTimeoutMs === undefined ? {} : { vectorsTimeoutMs }),
      });
      const prefix = `sec_${mode}`;
      record(`${prefix}_documents`, measured.documents - measured.failed);
      record(`${prefix}_chunks`, measured.chunks);
      searchable[mode] = record(`${prefix}_searchable_s`, measured.searchableSeconds);
      record(`${prefix}_ingest_chunks_per_s`, measured.chunks / measured.searchableSeconds);
      if (measured.cpuMsPerChunk !== null) record(`${prefix}_worker_cpu_ms_per_chunk`, measured.cpuMsPerChunk);
      if (mode === 'default') {
        if (measured.vectorsReadySeconds !== null) {
          record(`${prefix}_vectors_ready_s`, measured.vectorsReadySeconds);
          record(`${prefix}_end_to_end_chunks_per_s`, measured.chunks / measured.vectorsReadySeconds);
        } else record(`${prefix}_vectors_pending`, measured.vectorsPending);
        if (measured.vectorsPerSecond !== null) record(`${prefix}_vectors_per_s`, measured.vectorsPerSecond);
        if (measured.cpuMsPerChunkWithVectors !== null)
          record(`${prefix}_worker_cpu_ms_per_chunk_with_vectors`, measured.cpuMsPerChunkWithVectors);
      }
    } finally {
      await client.close();
      await worker?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  record('sec_searchable_vs_lexical', searchable.default! / searchable.lexical!);
  return figures;
}
