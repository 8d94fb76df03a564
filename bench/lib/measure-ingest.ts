import type { IngestClient, IngestSource } from '../../producer/client/ingest-client.js';
import { cpuSecondsOf, type WorkerProcess } from '../eval/start-worker-process.js';

/** What one measured ingest gave. */
export interface IngestMeasure {
  documents: number;
  failed: number;
  chunks: number;
  /** From handing the documents in until every one is indexed: searchable by its words. */
  searchableSeconds: number;
  /** Until every chunk also has its vector (equal to searchableSeconds without an embedder); null when they were not all in by `vectorsTimeoutMs`. */
  vectorsReadySeconds: number | null;
  /** Chunks still without a vector at the end (0 unless the wait timed out). */
  vectorsPending: number;
  /** Vectors added per second, from the first one seen to the last (null without vectors). */
  vectorsPerSecond: number | null;
  /** The worker process's CPU (all threads, Linux) per chunk, until searchable and until vectors were ready. */
  cpuMsPerChunk: number | null;
  cpuMsPerChunkWithVectors: number | null;
}

/**
 * Ingests `sources` into `collection` through the worker and measures both moments a user meets: when
 * the documents are searchable (the batch is finished) and when every chunk has its vector (added in
 * the background; the same moment without an embedder). Progress goes to `log` every 5 s.
 */
export async function measureIngest(
  client: IngestClient,
  worker: WorkerProcess,
  sources: IngestSource[],
  collection: string,
  log: (line: string) => void,
  { vectorsTimeoutMs = 2 * 60 * 60_000 }: { vectorsTimeoutMs?: number } = {},
): Promise<IngestMeasure> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const cpuBefore = cpuSecondsOf(worker.child.pid);
  const batch = await client.ingest(sources, { collection });
  log(`  queued ${batch.total} documents in ${seconds().toFixed(2)} s`);
  let lastLog = 0;
  const every5s = (line: () => string) => {
    if (performance.now() - lastLog < 5000) return;
    lastLog = performance.now();
    log(line());
  };
  const progress = await client.wait(batch.batchId, {
    timeoutMs: 60 * 60_000,
    onProgress: (current) => every5s(() => `  ${current.done + current.failed}/${current.total} documents`),
  });
  const searchableSeconds = seconds();
  const cpuSearchable = cpuSecondsOf(worker.child.pid);
  const chunks = progress.documents.reduce((sum, document) => sum + (document.chunks ?? 0), 0);
  if (progress.failed > 0)
    log(
      `  ${progress.failed} documents failed: ${JSON.stringify(progress.documents.filter((document) => document.status === 'failed').slice(0, 3))}`,
    );
  let first: { at: number; added: number } | undefined;
  let last = { at: searchableSeconds, added: 0, pending: 0 };
  const timedOut = await client
    .waitForVectors(collection, {
      timeoutMs: vectorsTimeoutMs,
      intervalMs: 250,
      onProgress: ({ added, pending }) => {
        if (added > 0) first ??= { at: seconds(), added };
        last = { at: seconds(), added, pending };
        every5s(() => `  vectors ${added}/${added + pending}`);
      },
    })
    .then(
      () => false,
      (error: unknown) => {
        if ((error as { code?: string }).code !== 'TIMEOUT') throw error;
        log(`  vectors not all in after ${vectorsTimeoutMs / 1000} s: ${last.pending} pending`);
        return true;
      },
    );
  const vectorsReadySeconds = timedOut ? null : seconds();
  const cpuReady = cpuSecondsOf(worker.child.pid);
  const added = last.added;
  const cpuMs = (after: typeof cpuReady) =>
    cpuBefore && after && chunks > 0 ? ((after.all - cpuBefore.all) * 1000) / chunks : null;
  const until = vectorsReadySeconds ?? last.at;
  return {
    documents: progress.total,
    failed: progress.failed,
    chunks,
    searchableSeconds,
    vectorsReadySeconds,
    vectorsPending: timedOut ? last.pending : 0,
    // Vectors may all be in by the first look (a small set): then from the moment the documents were searchable.
    vectorsPerSecond:
      added === 0
        ? null
        : first && until > first.at
          ? (added - first.added) / (until - first.at)
          : added / Math.max(0.001, until - searchableSeconds),
    cpuMsPerChunk: cpuMs(cpuSearchable),
    cpuMsPerChunkWithVectors: timedOut ? null : cpuMs(cpuReady),
  };
}
