import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { RELEASE } from './batch-scripts.js';
import type { Keys } from '../../store/keys.js';
import type { RunStatus } from '../../contracts/run-record.js';
import type { BatchAutopilotPlanner } from './batch-autopilot.js';
import { currentMode, type ClaimReply } from './batch-meta.js';

/** The run meta fields a finished run's usage is read from (a step's commit reads them for its finish hooks too, in this order: commit-step-function.lua). */
export const RUN_FIELDS = [
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'costUsd',
  'uncachedCostUsd',
  'createdAt',
  'finishedAt',
] as const;

/** A finished run's totals, as RELEASE adds them to its batch's; `elapsedMs` for the autopilot's sample. */
interface RunUsage {
  /** RELEASE's usage arguments: input tokens, cached input tokens, output tokens, cost USD, uncached cost USD. */
  args: number[];
  elapsedMs: number;
}

/**
 * A run of the batch finished: its usage (the run's own totals, at the price of the mode each call was
 * answered in), read for RELEASE to add to the batch's once per run (one read: the run's keys are in
 * another Cluster slot than the batch's); null when the run is gone.
 */
async function readRunUsage(redis: RedisConnection, keys: Keys, runId: string): Promise<RunUsage | null> {
  return runUsageOf(await redis.hmget(keys.run(runId).meta, ...RUN_FIELDS));
}

/** A run's usage from its RUN_FIELDS values (null where unset); null when none is set (the run is gone). */
function runUsageOf(run: readonly (string | null)[]): RunUsage | null {
  if (run.every((value) => value === null)) return null;
  const value = (index: number) => Number(run[index] ?? 0) || 0;
  const costUsd = value(3);
  // A run without cached tokens cost what it would have uncached.
  const uncached = run[4] === null || run[4] === undefined ? costUsd : value(4);
  return { args: [value(0), value(1), value(2), costUsd, uncached], elapsedMs: value(6) - value(5) };
}

/** The batch's meta fields RELEASE answers with: tenant, graph, mode, providerBatch. */
type ReleasedBatch = (string | null)[];

/**
 * A run of the batch finished: its usage goes into the batch's totals in the script that frees its slot
 * (RELEASE), so the batch's totals hold every finished run's by the time it completes. → RELEASE's reply:
 * the batch's status, the next item claimed into the freed slot, the run's model calls and what the
 * autopilot's sample needs of the batch; and the run's usage.
 */
export async function releaseRun(
  { redis, keys }: { redis: RedisConnection; keys: Keys },
  {
    runId,
    batchId,
    status,
    usageFields,
  }: {
    runId: string;
    batchId: string;
    status: RunStatus;
    /** The run's RUN_FIELDS as the commit that finished it read them: no read here then. */
    usageFields?: readonly (string | null)[] | undefined;
  },
): Promise<{ batchStatus: string; claimed?: ClaimReply; calls: number; batch: ReleasedBatch; usage: RunUsage }> {
  const batchKeys = keys.batch(batchId);
  const usage = (usageFields?.length === RUN_FIELDS.length
    ? runUsageOf(usageFields)
    : await readRunUsage(redis, keys, runId)) ?? { args: [0, 0, 0, 0, 0], elapsedMs: 0 };
  const [batchStatus, claimed, calls = 0, batch = []] = await runScript<
    [string, ClaimReply | null | undefined, number?, ReleasedBatch?]
  >(
    redis,
    RELEASE,
    [batchKeys.meta, batchKeys.inflight, batchKeys.items, batchKeys.done, batchKeys.usage],
    [runId, Date.now(), `${batchId}.i`, status, ...usage.args],
  );
  return { batchStatus, calls, batch, usage, ...(claimed ? { claimed } : {}) };
}

/** A completed question moves the tenant's averages of the graph that the next batch's plan starts from. */
export async function recordUsageSample(
  planner: BatchAutopilotPlanner | undefined,
  { status, usage, calls, batch }: { status: RunStatus; usage: RunUsage; calls: number; batch: ReleasedBatch },
): Promise<void> {
  const [tenant, graph, mode, providerBatch] = batch;
  if (status !== 'completed' || !planner || calls <= 0 || !tenant || !graph) return;
  const [inputTokens = 0, , outputTokens = 0] = usage.args;
  await planner.recordSample(tenant, graph, {
    inputTokens,
    outputTokens,
    calls,
    mode: currentMode({ mode: mode ?? undefined, providerBatch: providerBatch ?? undefined }),
    msPerCall: usage.elapsedMs > 0 ? usage.elapsedMs / calls : 0,
  });
}
