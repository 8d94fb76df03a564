import type { RunStoreContext } from './run-store-context.js';
import { slotPipeline } from './slot-pipeline.js';
import { SharedHistory } from './shared-history.js';

/** The indexes beside the runs: purging a run, trimming expired entries, the active-run index. */
export class RunRetention {
  constructor(private readonly context: RunStoreContext) {}

  /**
   * Deletes a run and its index entries. The run's keys go first, in one command (one slot); the index
   * entries after, each a key of its own: an entry left by a crash in between is skipped by readers.
   */
  async purge(runId: string, tenant: string): Promise<void> {
    // A later conversation turn's history starts with this run's messages: purging them would cut it short.
    await new SharedHistory(this.context).assertPurgeable(runId);
    // Its token log, durable waits and inbox too (an interrupt's answered mark among them): same hash
    // tag, so the same command. Their own expiry would remove them later, but a purge is now.
    const { waits, inbox } = this.context.keys.runWaits(runId);
    await this.context.redis.del(...this.context.keys.runAll(runId), this.context.keys.tokenLog(runId), waits, inbox);
    await slotPipeline(this.context.redis)
      .zrem(this.context.keys.tenantRuns(tenant), runId)
      .zrem(this.context.keys.activeRuns(), runId)
      // Its bytes leave the tenant's storage budget (StorageBudget counts them down at the next charge):
      // the bytes its scripts charged on its shard, and what admission charged before the ledgers existed.
      .zadd(this.context.keys.tenantStorage(tenant).expiry, 'XX', 0, runId)
      .zadd(
        this.context.keys.tenantRunStorage(tenant, this.context.keys.shardOf(runId)).expiry,
        0,
        this.context.keys.runMeta(runId),
      )
      .exec();
  }

  /**
   * Drops from each tenant's run list the entries whose run has expired (retention) — up to `limit` per
   * tenant, oldest first, among runs created more than the retention period ago (no younger run can have
   * expired). Listing drops expired entries too, but only of the pages it reads. → entries dropped.
   */
  async trimTenantIndexes(now: number, limit = 500): Promise<number> {
    let dropped = 0;
    for (const tenant of await this.context.redis.smembers(this.context.keys.tenants())) {
      const key = this.context.keys.tenantRuns(tenant);
      const candidates = await this.context.redis.zrangebyscore(
        key,
        '-inf',
        now - this.context.retentionSeconds * 1000,
        'LIMIT',
        0,
        limit,
      );
      if (candidates.length === 0) continue;
      const pipeline = slotPipeline(this.context.redis);
      for (const id of candidates) pipeline.exists(this.context.keys.run(id).meta);
      const exists = (await pipeline.exec()) ?? [];
      const expired = candidates.filter((_id, i) => exists[i]?.[1] === 0);
      if (expired.length > 0) dropped += await this.context.redis.zrem(key, ...expired);
    }
    return dropped;
  }

  /** Ids of runs not known to be finished, oldest first. */
  activeRunIds(limit = 10_000): Promise<string[]> {
    return this.context.redis.zrange(this.context.keys.activeRuns(), '0', String(limit - 1));
  }

  async forgetActive(runId: string): Promise<void> {
    await this.context.redis.zrem(this.context.keys.activeRuns(), runId);
  }
}
