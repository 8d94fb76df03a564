import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { Config } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { slotPipeline } from '../../shared/store/slot-pipeline.js';
import { Keys } from '../../shared/store/keys.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { allShards, shardTag } from '../../shared/contracts/shards.js';
import { isTerminal, type RunStatus } from '../../shared/contracts/run-record.js';

/**
 * Refuses to start a worker on a Redis it would break (engine v2, docs/concepts/shards.md):
 *  - AGENTQ_SHARDS must be the deployment's: a run's shard comes from its id and the shard count, so a
 *    process with another count would look for runs and jobs where they are not. The first worker records
 *    its count; the others must match it.
 *  - runs of the first engine's layout (`agentq:{run:<id>}`, one `bull:agentq-steps` queue) still in
 *    flight would never be stepped by this version: drain them with the previous one first.
 */
export async function checkStepLayout(
  redis: RedisConnection,
  config: Pick<Config, 'keyPrefix' | 'queuePrefix' | 'shards'>,
): Promise<void> {
  const keys = new Keys(config.keyPrefix, config.shards);
  await redis.setnx(keys.shardCount(), String(config.shards));
  const recorded = Number(await redis.get(keys.shardCount()));
  if (recorded !== config.shards) {
    throw new AgentqError(
      'INVALID_INPUT',
      `AGENTQ_SHARDS is ${config.shards} here, but this deployment runs ${recorded} shards (recorded in Redis key ${keys.shardCount()} by its first worker): set AGENTQ_SHARDS=${recorded} in every worker and producer, or let every run finish and delete that key to change the count`,
    );
  }
  const legacy = `${config.queuePrefix.replace(/[{}]/g, '')}:${STEP_QUEUE}`;
  // Before balanced shard tags (shared/contracts/shards.ts), shard k of several was `{s<k>}`: a queue still holding
  // jobs there would never be worked. (With one shard the tag is `{s0}` in both layouts.)
  const unbalanced =
    config.shards > 1
      ? allShards(config.shards).filter((shard) => shardTag(shard, config.shards) !== `{s${shard}}`)
      : [];
  const pipeline = slotPipeline(redis);
  for (const queue of [
    legacy,
    ...unbalanced.map((shard) => `${config.queuePrefix.replace(/[{}]/g, '')}:{s${shard}}:${STEP_QUEUE}`),
  ]) {
    pipeline.llen(`${queue}:wait`).llen(`${queue}:active`).zcard(`${queue}:delayed`).zcard(`${queue}:prioritized`);
  }
  const queued = await pipeline.zrange(keys.activeRuns(), '0', '199').exec();
  const counts = (queued ?? []).slice(0, -1).map(([, count]) => Number(count ?? 0));
  const jobs = counts.slice(0, 4).reduce((sum, count) => sum + count, 0);
  const unbalancedJobs = counts.slice(4).reduce((sum, count) => sum + count, 0);
  if (unbalancedJobs > 0) {
    throw new AgentqError(
      'CONFLICT',
      `this Redis holds ${unbalancedJobs} step jobs in the shard queues of the previous shard layout (${config.queuePrefix.replace(/[{}]/g, '')}:{s<k>}:${STEP_QUEUE}); this version tags shards so that they spread evenly over a cluster's masters and cannot step them. Let the previous version finish those runs first (docs/operations/upgrading.md)`,
    );
  }
  const active = ((queued?.at(-1)?.[1] as string[] | undefined) ?? []).slice();
  let inFlight: string | undefined;
  if (active.length > 0) {
    const pipeline = slotPipeline(redis);
    for (const runId of active) pipeline.hget(keys.legacyRunMeta(runId), 'status');
    const statuses = (await pipeline.exec()) ?? [];
    inFlight = active.find((_runId, index) => {
      const status = statuses[index]?.[1] as RunStatus | null | undefined;
      return typeof status === 'string' && !isTerminal(status);
    });
  }
  if (jobs > 0 || inFlight) {
    throw new AgentqError(
      'CONFLICT',
      `this Redis holds runs of agentq's first engine layout still in flight (${inFlight ? `e.g. run ${inFlight}` : `${jobs} jobs in queue ${legacy}`}); engine v2 keeps runs under shard tags and cannot step them. Drain them first: run the previous agentq version until they finish (or cancel them), then start this one (docs/operations/upgrading.md)`,
    );
  }
}
