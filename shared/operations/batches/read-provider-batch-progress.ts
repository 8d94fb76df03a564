import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Keys } from '../../store/keys.js';
import type { ProviderBatchProgress } from './batch-schema.js';
import { parseFlushRecord } from './provider-batch-flush-record.js';

/** States of a flush whose requests still wait (their steps are not woken yet). */
const WAITING = new Set(['intent', 'uploaded', 'created', 'finished']);

/**
 * A batch's provider batches as its status shows them: each one's ids, status and request
 * counts, the model calls parked, and the usage so far at batch prices beside live prices. Reads the
 * collector's records (a handful of hashes: one per provider batch).
 */
export async function readProviderBatchProgress(
  redis: RedisConnection,
  keys: Keys,
  batchId: string,
): Promise<ProviderBatchProgress> {
  const batchKeys = keys.providerBatch(batchId);
  const flushIds = await redis.zrange(batchKeys.flushes, '0', '-1');
  const pipeline = redis.pipeline();
  for (const flushId of flushIds) pipeline.hgetall(batchKeys.flush(flushId));
  pipeline.zcard(batchKeys.pending);
  const replies = (await pipeline.exec()) ?? [];
  const pending = Number(replies.at(-1)?.[1] ?? 0);
  const progress: ProviderBatchProgress = {
    batches: [],
    pending,
    parked: pending,
    usage: { inputTokens: 0, outputTokens: 0 },
    costUsd: 0,
    liveCostUsd: 0,
  };
  for (const [fields] of replies.slice(0, -1).map(([, value]) => [value as Record<string, string>])) {
    const flush = parseFlushRecord(fields ?? {});
    if (!flush) continue;
    if (WAITING.has(flush.state)) progress.parked += flush.requests;
    progress.batches.push({
      flush: flush.id,
      id: flush.batchId ?? null,
      status: flush.status ?? flush.state,
      requests: flush.requests,
      requestCounts: flush.counts ?? null,
      createdAt: new Date(flush.createdAt).toISOString(),
      finishedAt: flush.finishedAt === undefined ? null : new Date(flush.finishedAt).toISOString(),
    });
    if (flush.usage) {
      progress.usage.inputTokens += flush.usage.inputTokens;
      progress.usage.outputTokens += flush.usage.outputTokens;
      progress.costUsd += flush.usage.costUsd;
      progress.liveCostUsd += flush.usage.liveCostUsd;
    }
  }
  return progress;
}
