import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Keys } from '../../store/keys.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import { TERMINAL_STATUSES } from '../../contracts/run-record.js';
import { redisTimeMs } from '../../redis/redis-time.js';
import { KeyedSlots, type SlotReservation } from '../../store/slots/keyed-slots.js';

/** A slot reserved this recently may belong to a run being created right now: the sweep leaves it. */
const SWEEP_GRACE_MS = 60_000;

/**
 * The per-tenant cap on runs in flight (accepted, not yet completed, failed or cancelled): a key of
 * AGENTQ_TENANT_MAX_INFLIGHT slots per tenant (KeyedSlots) that a run reserves or is refused — no line:
 * a run refused here was never created. Every creator reserves a slot through TenantAdmission before the
 * run exists; the run store's onFinished hook (run-finished-hook.ts) releases it. A slot whose release was
 * lost (a crash between finish and hook, a purge) is swept when the set looks full.
 */
export class TenantInflight {
  private readonly slots: KeyedSlots;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** Runs in flight per tenant; 0 = unlimited. */
    readonly max: number,
  ) {
    this.slots = new KeyedSlots(redis);
  }

  /** → true when `runId` holds a slot now; false when the tenant is at its cap. */
  async reserve(tenant: string, runId: string): Promise<boolean> {
    return (await this.take(tenant, runId)) !== 'full';
  }

  /** Holds a slot for `runId` (unless it holds one): what TenantAdmission asks, to undo only what it took. */
  async take(tenant: string, runId: string): Promise<SlotReservation> {
    if (this.max === 0) return 'held';
    const key = this.keys.tenantInflight(tenant);
    const first = await this.slots.reserve(key, runId, this.max);
    if (first !== 'full') return first;
    // Slots may also have been freed by a hook since the first try: try again after the sweep either way.
    await this.sweep(tenant);
    return this.slots.reserve(key, runId, this.max);
  }

  /** Gives `runId`'s slot back (no one waits in line for it: refused runs were never created). */
  async release(tenant: string, runId: string): Promise<void> {
    if (this.max === 0) return;
    await this.slots.leave(this.keys.tenantInflight(tenant), runId, this.max);
  }

  async count(tenant: string): Promise<number> {
    return this.redis.zcard(this.keys.tenantInflight(tenant));
  }

  /** Drops entries whose run finished, and entries without a run once they are older than the grace. */
  private async sweep(tenant: string): Promise<void> {
    const key = this.keys.tenantInflight(tenant);
    const flat = await this.redis.zrange(key, '0', '-1', 'WITHSCORES');
    if (flat.length === 0) return;
    // Slots are stamped at Redis's time: their age is judged by it, not by this process's clock.
    const now = await redisTimeMs(this.redis);
    const pipeline = slotPipeline(this.redis); // runs of all shards
    for (let i = 0; i < flat.length; i += 2) pipeline.hget(this.keys.run(flat[i]!).meta, 'status');
    const replies = (await pipeline.exec()) ?? [];
    const stale = replies.flatMap(([, status], index) => {
      const [id, reservedAt] = [flat[index * 2]!, Number(flat[index * 2 + 1])];
      const gone =
        typeof status === 'string'
          ? (TERMINAL_STATUSES as readonly string[]).includes(status)
          : now - reservedAt > SWEEP_GRACE_MS;
      return gone ? [id] : [];
    });
    if (stale.length > 0) await this.redis.zrem(key, ...stale);
  }
}
