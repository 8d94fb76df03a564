import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Keys } from '../../store/keys.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import { cachedMarkOf, parseMeta } from '../../store/run-meta.js';
import { batchRunId, type BatchMeta } from './batch-meta.js';
import { bucket } from './batch-progress.js';
import type { BatchResult, BatchStatus } from './batch-schema.js';

/** One question's result from its run's meta (HGETALL; empty or absent before the run exists): answers only for completed runs. */
export function batchResultOf({
  item,
  runId,
  batchStatus,
  fields,
}: {
  item: { id: string; question: string };
  runId: string;
  batchStatus: BatchStatus;
  fields: unknown;
}): BatchResult {
  const meta = fields as Record<string, string> | undefined;
  const run = meta?.id ? parseMeta(meta) : null;
  const output = run?.status === 'completed' ? run.output : null;
  const answer = typeof output === 'string' ? output : ((output as { answer?: unknown } | null)?.answer ?? null);
  const sources = (output as { sources?: unknown[] } | null)?.sources ?? [];
  return {
    id: item.id,
    question: item.question,
    runId,
    status: bucket(run?.status ?? null, batchStatus),
    answer: typeof answer === 'string' ? answer : answer === null ? null : JSON.stringify(answer),
    sources: Array.isArray(sources) ? sources : [],
    error: run?.error ? { code: run.error.code, message: run.error.message } : null,
    output,
    ...cachedMarkOf(output),
  };
}

/** One result per question of the batch, in order: its items, and each one's run meta read in one pipeline. */
export async function readBatchResults(
  { redis, keys }: { redis: RedisConnection; keys: Keys },
  meta: BatchMeta,
): Promise<BatchResult[]> {
  const items = (await redis.lrange(keys.batch(meta.id).items, 0, -1)).map(
    (item) => JSON.parse(item) as { id: string; question: string },
  );
  const pipeline = slotPipeline(redis);
  for (let index = 0; index < items.length; index += 1) pipeline.hgetall(keys.run(batchRunId(meta.id, index)).meta);
  const replies = (await pipeline.exec()) ?? [];
  return items.map((item, index) =>
    batchResultOf({ item, runId: batchRunId(meta.id, index), batchStatus: meta.status, fields: replies[index]?.[1] }),
  );
}
