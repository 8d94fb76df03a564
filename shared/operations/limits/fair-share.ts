import { MAX_PRIORITY } from '../../contracts/job-schema.js';
import type { Keys } from '../../store/keys.js';
import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import { TERMINAL_STATUSES } from '../../contracts/run-record.js';
import { luaScript } from '../../redis/lua-script.js';

/** BullMQ priority added per fair share a tenant has in flight beyond its first. */
export const FAIR_SHARE_STEP = 1000;

/** KEYS: 1 the tenant's load set · ARGV: 1 runId, 2 now → how many runs it held before this one. */
const COUNT_AND_ADD = luaScript(new URL('./lua/count-and-add-load-1.lua', import.meta.url));

/** How long a process goes before it checks a tenant's load set for runs whose release was lost. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Fairness between tenants with what BullMQ gives: priorities. A tenant's unfinished runs (batch
 * questions aside: a batch holds at most its `concurrency` in flight and has a priority of its own) are
 * its load. A new run of a tenant already holding `share` or more gets its priority raised by
 * FAIR_SHARE_STEP for every whole `share` it holds — BullMQ serves lower numbers first, and runs without
 * a priority before all — so one tenant's flood of runs queues behind the runs of tenants within their
 * share, and a bigger flood behind a smaller one. Inside one tenant the order of its own priorities holds
 * (all its new runs get the same step). A run's priority is fixed when it is created: a flood that
 * drains lets the tenant's next runs in ahead of its older ones. A deployment with one tenant is left
 * alone (no one to be fair to); its load is still counted, for when a second tenant comes.
 */
export class FairShare {
  private readonly swept = new Map<string, number>();
  private manySince: number | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** AGENTQ_TENANT_FAIR_SHARE; 0 = off (priorities are the runs' own). */
    readonly share: number,
  ) {}

  /**
   * Counts `runId` in its tenant's load and → the BullMQ priority its step jobs get: `own` (0 = none)
   * while the tenant is within its share, else raised by FAIR_SHARE_STEP per share held.
   */
  async admit(tenant: string, runId: string, own: number, now = Date.now()): Promise<number> {
    if (this.share === 0) return own;
    let before: number;
    let many: boolean | undefined;
    if (this.manyKnown(now)) {
      before = await runScript<number>(this.redis, COUNT_AND_ADD, [this.keys.tenantLoad(tenant)], [runId, now]);
    } else {
      // The tenant count rides along with the load count (one round trip, not two): a busy one-tenant
      // deployment holds more than its share all the time, and asked for it on every enqueue. EVAL, not
      // EVALSHA: a pipeline cannot fall back on NOSCRIPT, and Redis caches the compiled script anyway.
      const replies = await slotPipeline(this.redis)
        .eval(COUNT_AND_ADD, 1, this.keys.tenantLoad(tenant), runId, now)
        .scard(this.keys.tenants())
        .exec();
      const [[countError, count] = [], [, tenants] = []] = replies ?? [];
      if (countError) throw countError;
      before = Number(count);
      many = Number(tenants) > 1;
      this.manySince = many ? now : undefined;
    }
    if (before >= this.share && now - (this.swept.get(tenant) ?? 0) >= SWEEP_EVERY_MS) {
      this.swept.set(tenant, now);
      before -= await this.sweep(tenant, now);
    }
    const priority = fairPriority(own, before, this.share);
    // One tenant has no one to be fair to: its runs keep their own priorities (and the wait list).
    return priority !== own && (many ?? (await this.manyTenants(now))) ? priority : own;
  }

  /**
   * Whether more than one tenant has had runs (the run store's tenant set). Asked only for a run over its
   * share; a yes is kept for a minute (a second tenant does not go away soon), a no is asked again.
   */
  private async manyTenants(now: number): Promise<boolean> {
    if (this.manyKnown(now)) return true;
    const many = (await this.redis.scard(this.keys.tenants())) > 1;
    this.manySince = many ? now : undefined;
    return many;
  }

  /** A second tenant was seen within the last minute (kept that long: a second tenant does not go away soon). */
  private manyKnown(now: number): boolean {
    return this.manySince !== undefined && now - this.manySince < 60_000;
  }

  /** Takes a finished run out of its tenant's load (the run store's onFinished hook). */
  async release(tenant: string, runId: string): Promise<void> {
    await this.redis.zrem(this.keys.tenantLoad(tenant), runId);
  }

  /**
   * Drops runs that finished, and runs never created (a crash or a refusal between the count and the
   * create) once they are a minute old — younger ones may be being created right now; → how many.
   */
  private async sweep(tenant: string, now: number): Promise<number> {
    const key = this.keys.tenantLoad(tenant);
    const flat = await this.redis.zrange(key, '0', '-1', 'WITHSCORES');
    const stale: string[] = [];
    for (let start = 0; start < flat.length; start += 1000) {
      const chunk = flat.slice(start, start + 1000);
      // Run metas live on their shards' slots: slotPipeline splits the reads per slot on a Cluster.
      const pipeline = slotPipeline(this.redis);
      for (let i = 0; i < chunk.length; i += 2) pipeline.hget(this.keys.run(chunk[i]!).meta, 'status');
      const replies = (await pipeline.exec()) ?? [];
      replies.forEach(([, status], index) => {
        const [id, addedAt] = [chunk[index * 2]!, Number(chunk[index * 2 + 1])];
        if (
          typeof status === 'string'
            ? (TERMINAL_STATUSES as readonly string[]).includes(status)
            : now - addedAt > SWEEP_EVERY_MS
        )
          stale.push(id);
      });
    }
    if (stale.length > 0) await this.redis.zrem(key, ...stale);
    return stale.length;
  }
}

/** `own` raised by FAIR_SHARE_STEP for each whole `share` of `load` (capped at BullMQ's largest). */
export function fairPriority(own: number, load: number, share: number): number {
  if (share <= 0 || load < share) return own;
  return Math.min(MAX_PRIORITY, own + FAIR_SHARE_STEP * Math.floor(load / share));
}
