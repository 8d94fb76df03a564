import type { RedisConnection } from '../../redis/connect-redis.js';
import type { RunStatus } from '../../contracts/run-record.js';
import type { Keys } from '../../store/keys.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import { batchRunId, parseBatchMeta, type BatchMeta } from './batch-meta.js';
import type { BatchProgress, BatchStatus } from './batch-schema.js';

/** A run status as a batch progress bucket; an item never dispatched is queued (or cancelled with its batch). */
export function bucket(status: RunStatus | null, batchStatus: BatchStatus): keyof Omit<BatchProgress, 'total'> {
  switch (status) {
    case null:
    case 'queued':
      return batchStatus === 'cancelled' ? 'cancelled' : 'queued';
    case 'completed':
    case 'failed':
    case 'cancelled':
      return status;
    default:
      return 'running';
  }
}

/**
 * A batch's meta and where its items are, or null when it is missing. Finished runs come from the meta's
 * counts (RELEASE keeps them), read with the in-flight set in one MULTI — a run moves from one to the
 * other atomically — so only the runs in flight are read after it: at most the batch's concurrency, not
 * one read per question on every poll. Items neither finished nor in flight have no run yet: queued
 * (cancelled with their batch). A batch made before the counts were kept is read run by run.
 */
export async function readBatchProgress(
  redis: RedisConnection,
  keys: Keys,
  batchId: string,
): Promise<{ meta: BatchMeta; progress: BatchProgress } | null> {
  const batchKeys = keys.batch(batchId);
  const [fields, inflight] = (await redis
    .multi()
    .hgetall(batchKeys.meta)
    .smembers(batchKeys.inflight)
    .exec()
    .then((replies) => replies?.map(([, value]) => value))) as [Record<string, string>, string[]];
  const meta = parseBatchMeta(fields);
  if (!meta) return null;
  const progress: BatchProgress = { total: meta.total, queued: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
  const read = meta.done ? inflight : Array.from({ length: meta.total }, (_, index) => batchRunId(meta.id, index));
  // The runs are spread over the shards: one pipeline per slot on a Cluster.
  const pipeline = slotPipeline(redis);
  for (const runId of read) pipeline.hget(keys.run(runId).meta, 'status');
  const statuses = read.length > 0 ? ((await pipeline.exec()) ?? []) : [];
  for (const [, status] of statuses) progress[bucket((status as RunStatus | null) ?? null, meta.status)] += 1;
  if (meta.done) {
    const { completed, failed, cancelled } = meta.done;
    progress.completed += completed;
    progress.failed += failed;
    progress.cancelled += cancelled;
    const unstarted = meta.total - completed - failed - cancelled - inflight.length;
    progress[meta.status === 'cancelled' ? 'cancelled' : 'queued'] += Math.max(0, unstarted);
  }
  return { meta, progress };
}
