import type { RedisConnection } from '../../../shared/adapters/redis/connect-redis.js';
import type { Keys } from '../../../shared/store/keys.js';
import { runScript } from '../../../shared/adapters/redis/create-redis.js';
import { slotPipeline } from '../../../shared/store/slot-pipeline.js';
import { TERMINAL_STATUSES } from '../../../shared/contracts/run-record.js';

/** KEYS: 1 tenant's in-flight set · ARGV: 1 runId, 2 cap, 3 now → 1 reserved (or held already), 0 full. */
const RESERVE = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`;

/**
 * The per-tenant cap on runs in flight (accepted, not yet completed, failed or cancelled), shared by
 * every API process through one sorted set per tenant. The API reserves a slot before it enqueues; the
 * run store's onFinished hook (worker/webhooks/run-finished-hook.ts) releases it. A slot whose release
 * was lost (a crash between finish and hook, a purge) is swept when the set looks full.
 */
export class TenantInflight {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** Runs in flight per tenant; 0 = unlimited. */
    readonly max: number,
  ) {}

  /** → true when `runId` holds a slot now; false when the tenant is at its cap. */
  async reserve(tenant: string, runId: string, now = Date.now()): Promise<boolean> {
    if (this.max === 0) return true;
    const key = this.keys.tenantInflight(tenant);
    if ((await runScript<number>(this.redis, RESERVE, [key], [runId, this.max, now])) === 1) return true;
    // Slots may also have been freed by a hook since the first try: try again after the sweep either way.
    await this.sweep(tenant);
    return (await runScript<number>(this.redis, RESERVE, [key], [runId, this.max, now])) === 1;
  }

  async release(tenant: string, runId: string): Promise<void> {
    if (this.max === 0) return;
    await this.redis.zrem(this.keys.tenantInflight(tenant), runId);
  }

  async count(tenant: string): Promise<number> {
    return this.redis.zcard(this.keys.tenantInflight(tenant));
  }

  /** Drops entries whose run finished or is gone. */
  private async sweep(tenant: string): Promise<void> {
    const key = this.keys.tenantInflight(tenant);
    const ids = await this.redis.zrange(key, '0', '-1');
    if (ids.length === 0) return;
    const pipeline = slotPipeline(this.redis); // runs of all shards
    for (const id of ids) pipeline.hget(this.keys.run(id).meta, 'status');
    const replies = (await pipeline.exec()) ?? [];
    const stale = ids.filter((_id, index) => {
      const status = replies[index]?.[1];
      return typeof status !== 'string' || (TERMINAL_STATUSES as readonly string[]).includes(status);
    });
    if (stale.length > 0) await this.redis.zrem(key, ...stale);
  }
}
