import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import type { Keys } from '../../store/keys.js';
import type { RunStatus } from '../../contracts/run-record.js';
import type { BatchAutopilotPlanner } from './batch-autopilot.js';
import { currentMode } from './batch-meta.js';
import { ADD_RUN_USAGE } from './batch-scripts.js';

/** The run meta fields a finished run's usage is read from. */
const RUN_FIELDS = [
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'costUsd',
  'uncachedCostUsd',
  'createdAt',
  'finishedAt',
] as const;

/**
 * A run of the batch finished: its usage (the run's own totals, at the price of the mode each call was
 * answered in) goes into the batch's, once per run; a completed question also moves the tenant's averages
 * of the graph that the next batch's plan starts from.
 */
export async function addRunUsage(
  { redis, keys, planner }: { redis: RedisConnection; keys: Keys; planner: BatchAutopilotPlanner | undefined },
  { runId, batchId, status }: { runId: string; batchId: string; status: RunStatus },
): Promise<void> {
  const batchKeys = keys.batch(batchId);
  const replies = (await slotPipeline(redis)
    .hmget(batchKeys.meta, 'tenant', 'graph', 'mode', 'providerBatch')
    .hmget(keys.run(runId).meta, ...RUN_FIELDS)
    .exec()) as [unknown, (string | null)[] | undefined][] | null;
  const batch = replies?.[0]?.[1];
  const run = replies?.[1]?.[1];
  const [tenant, graph, mode, providerBatch] = batch ?? [];
  if (!tenant || !graph || !run) return;
  const value = (index: number) => Number(run[index] ?? 0) || 0;
  const [inputTokens, cached, outputTokens, costUsd] = [value(0), value(1), value(2), value(3)];
  // A run without cached tokens cost what it would have uncached.
  const uncached = run[4] === null || run[4] === undefined ? costUsd : value(4);
  const calls = await runScript<number>(
    redis,
    ADD_RUN_USAGE,
    [batchKeys.meta, batchKeys.usage],
    [runId, inputTokens, cached, outputTokens, costUsd, uncached],
  );
  if (status !== 'completed' || !planner || calls <= 0) return;
  const elapsed = value(6) - value(5);
  await planner.recordSample(tenant, graph, {
    inputTokens,
    outputTokens,
    calls,
    mode: currentMode({ mode, providerBatch: providerBatch ?? undefined }),
    msPerCall: elapsed > 0 ? elapsed / calls : 0,
  });
}
