import { ownWorker } from '../runtime/liveness-thread.js';
import { Worker } from 'bullmq';
import type { Config } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { ingestJobSchema, type IngestJobData } from '../../shared/retrieval/ingest-job.js';
import { RedisDocumentStore } from '../../shared/store/documents/redis-document-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { WarningGate, warningKind } from '../../shared/telemetry/warning-gate.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import { INGEST_QUEUE } from '../../shared/contracts/queues.js';
import { bullmqConnection } from '../../shared/bullmq/bullmq-connection.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import { loadVectorStore } from '../../shared/adapters/open-vector-store.js';
import { createEmbedder, endpointOf } from '../../shared/adapters/create-embedder.js';
import { Keys } from '../../shared/store/keys.js';
import { IngestProcessor } from './ingest-processor.js';
import { ParsePool } from './parse-pool.js';
import { VectorBuilder } from './vector-builder.js';

/** A collection's vector lease lasts this many AGENTQ_LIVENESS_TTL_MS: a killed worker's half-embedded collections are taken over that soon. */
const VECTOR_LEASE_LIVENESS_TTLS = 5;
/** Documents a worker holds per parse thread (the extra ones wait for a thread with their lock renewed). */
const JOBS_PER_THREAD = 4;

interface StartIngestWorkerOptions {
  config: Config;
  logger: Logger;
  /** @default createVectorStore(config), opened on the first document */
  vectorStore?: VectorStore;
  /**
   * Embeds every chunk, so the store keeps dense vectors beside the text. `null`: none. With a store that
   * takes vectors later (the embedded one), chunks are written first and embedded in the background.
   * @default the embedder EMBED_PROVIDER names for documents (createEmbedder(config, …, 'background')): the built-in model unless EMBED_MODEL is set, none with EMBED_PROVIDER=none
   */
  embedder?: Embedder | null;
  /** The process's liveness id (startWorker): the worker's job tokens name it, so a dead process's locks are released by its peers. */
  processId?: string;
}

export interface IngestWorker {
  /** Stops taking documents, lets the ones in hand finish, then closes threads, store and connections. */
  close(): Promise<void>;
  /** Drops its connections without waiting (a shutdown past its deadline). */
  disconnect(): void;
}

/**
 * The ingest side of a worker process: its own BullMQ Worker on INGEST_QUEUE whose parsing runs in
 * AGENTQ_INGEST_CONCURRENCY worker threads (ParsePool), so neither a slow queue of
 * documents nor a heavy PDF delays step jobs or their lock renewal. AGENTQ_INGEST_CONCURRENCY=0: this
 * process ingests nothing (returns a no-op).
 */
export async function startIngestWorker({
  config,
  logger,
  vectorStore,
  processId,
  embedder = createEmbedder(config, endpointOf(config), 'background'),
}: StartIngestWorkerOptions): Promise<IngestWorker> {
  if (config.ingestConcurrency === 0) return { close: async () => undefined, disconnect: () => undefined };
  const redis = connectRedis(config, 'worker');
  const bullmq = bullmqConnection(config, 'worker');
  const documents = new RedisDocumentStore(redis, {
    keyPrefix: config.keyPrefix,
    retentionSeconds: config.retentionSeconds,
  });
  const pool = new ParsePool({ size: config.ingestConcurrency, timeoutMs: config.ingestParseTimeoutMs, logger });
  // One line per interval for warnings every document repeats (a full disk under the embedded store).
  const warnings = new WarningGate(logger, config.warnIntervalMs);
  let store = vectorStore;
  // Only the adapter the settings name is loaded (the Qdrant client is not, for the embedded store).
  const createStore = vectorStore ? undefined : await loadVectorStore(config);
  const openStore = () => (store ??= createStore!());
  // Documents in hand: while there are any, this process's vectors wait (parsing goes first).
  let inHand = 0;
  // Vectors in the background: one builder per process, which also carries on with collections other
  // processes (or this one before a restart) left half embedded.
  const builder = embedder
    ? new VectorBuilder({
        redis,
        keys: new Keys(config.keyPrefix),
        vectorStore: openStore,
        embedder,
        logger,
        leaseMs: VECTOR_LEASE_LIVENESS_TTLS * config.livenessTtlMs,
        busy: () => inHand > 0,
      })
    : undefined;
  const processor = new IngestProcessor({
    documents,
    vectorStore: openStore,
    pool,
    chunking: { maxTokens: config.chunkTokens, overlapTokens: config.chunkOverlapTokens },
    ...(embedder ? { embedder } : {}),
    ...(builder ? { vectorsLater: builder } : {}),
    logger,
    warnings,
  });
  const worker = ownWorker(
    new Worker<IngestJobData>(
      INGEST_QUEUE,
      async (job, token) => {
        inHand += 1;
        try {
          return await processor.process(job, token);
        } finally {
          inHand -= 1;
        }
      },
      {
        connection: bullmq.connection,
        prefix: config.queuePrefix,
        // More documents in hand than threads: one document's Redis and SQLite I/O overlaps another's parsing.
        concurrency: config.ingestConcurrency * JOBS_PER_THREAD,
        lockDuration: config.lockDurationMs,
        stalledInterval: config.stalledIntervalMs,
        maxStalledCount: config.maxStalledCount,
        autorun: false,
      },
    ),
    processId,
  );
  worker.run().catch((error: unknown) => logger.error({ err: String(error) }, 'ingest worker stopped'));
  // Gated: a fault every job in hand meets (a full disk, a lost lock per parked job) is one line per interval.
  worker.on('error', (error) => {
    const message = 'ingest worker error (will retry)';
    warnings.warn(warningKind(message, error), { err: error.message }, message);
  });
  // A job failed without its processor deciding so (stalled past maxStalledCount): still record it, or its batch never finishes.
  worker.on('failed', (job, error) => {
    // Every other final failure went through the processor, which recorded it with its precise reason.
    if (!job || !/stalled/i.test(error.message)) return;
    const data = ingestJobSchema.safeParse(job.data);
    if (!data.success) return;
    processor
      .recordFailure(data.data, new AgentqError('INTERNAL', `indexing failed: ${error.message}`))
      .catch((failure: unknown) => logger.warn({ err: String(failure) }, 'could not record an ingest failure'));
  });
  await worker.waitUntilReady();
  // Only with a store that takes vectors later; others get them at ingest.
  if (builder && openStore().setVectors) builder.start();
  return {
    async close() {
      await worker.close();
      warnings.flush();
      await builder?.close();
      bullmq.close();
      await pool.close();
      await store?.close();
      await redis.quit().catch(() => redis.disconnect());
    },
    disconnect() {
      builder?.close().catch(() => undefined);
      worker.disconnect().catch(() => undefined);
      bullmq.close();
      redis.disconnect();
    },
  };
}
