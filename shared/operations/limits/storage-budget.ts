import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { AgentqError } from '../../contracts/errors.js';
import { TERMINAL_STATUSES } from '../../contracts/run-record.js';
import type { Keys } from '../../store/keys.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import { luaScript } from '../../redis/lua-script.js';

/** The tenant limits field of the budget (PUT /v1/admin/tenants/:tenant/limits `storageBytes`). */
const STORAGE_LIMIT_FIELD = 'storageBytes';

/**
 * Takes charges whose bytes have left Redis (expired with their run, purged) out of the total; then,
 * unless `id` is charged already, charges it `bytes` if they fit the limit.
 * KEYS: 1 total · 2 charges · 3 expiry · 4 the tenant's limits hash
 * ARGV: 1 id · 2 bytes · 3 now ms · 4 default limit (AGENTQ_TENANT_MAX_BYTES; 0 = none)
 * → {2, total, limit} held already (and live again: a retried run) · {1, total, limit} charged · {0, total, limit} refused
 */
const CHARGE = luaScript(new URL('./lua/charge-storage-4.lua', import.meta.url), { STORAGE_LIMIT_FIELD });

/** KEYS: 1 total · 2 charges · 3 expiry · ARGV: 1 id · 2 bytes to add · 3 expires at (ms) */
const SETTLE = luaScript(new URL('./lua/settle-storage-3.lua', import.meta.url));

/** KEYS: 1 total · 2 charges · 3 expiry · ARGV: 1 id → bytes released */
const RELEASE = luaScript(new URL('./lua/release-storage-3.lua', import.meta.url));

/** How long a process goes before it checks a tenant's live charges for runs whose finish was never settled. */
const SWEEP_EVERY_MS = 60_000;

/** What `charge` did: a new charge, one the id held already. */
type StorageCharge = 'new' | 'held';

/**
 * A tenant's storage budget: bytes of run inputs and outputs kept in Redis, against `storageBytes` of its
 * limits or AGENTQ_TENANT_MAX_BYTES. Charges are by id, so documents can join (`doc:<docId>`, never
 * swept as runs are) — not wired yet. Approximate by design:
 * - a run is charged the JSON length of its input when it is admitted (TenantAdmission) and the JSON
 *   length of its output when it finishes (the run-finished hook), not its state, history or events;
 * - its bytes leave the total when its retention ends (the finish sets the charge's expiry to finish
 *   time + AGENTQ_RETENTION_SECONDS) or when it is purged — counted down at the tenant's next charge;
 * - a run whose finish hook was lost keeps its charge until a refusal sweeps charges of runs that are
 *   finished (given the retention from now) or gone (dropped).
 */
export class StorageBudget {
  private readonly swept = new Map<string, number>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    private readonly options: {
      /** AGENTQ_TENANT_MAX_BYTES: the budget of tenants without their own `storageBytes`; 0 = unlimited. */
      defaultMaxBytes: number;
      /** How long a finished run's keys stay (AGENTQ_RETENTION_SECONDS). */
      retentionSeconds: number;
    },
  ) {}

  /**
   * Charges `id` (a run id) `bytes`; → 'held' when it is charged already. Throws
   * STORAGE_BUDGET_EXCEEDED: retryable when the tenant's stored bytes leave no room now, not retryable
   * when `bytes` alone are more than the whole budget.
   */
  async charge(tenant: string, id: string, bytes: number, now = Date.now()): Promise<StorageCharge> {
    const attempt = () =>
      this.run<[number, number, number]>(CHARGE, tenant, [id, bytes, now, this.options.defaultMaxBytes]);
    let [result, total, limit] = await attempt();
    if (result === 0 && now - (this.swept.get(tenant) ?? 0) >= SWEEP_EVERY_MS) {
      this.swept.set(tenant, now);
      if ((await this.sweep(tenant, now)) > 0) [result, total, limit] = await attempt();
    }
    if (result !== 0) return result === 2 ? 'held' : 'new';
    const where = `AGENTQ_TENANT_MAX_BYTES, or storageBytes of PUT /v1/admin/tenants/${tenant}/limits`;
    if (bytes > limit)
      throw new AgentqError(
        'STORAGE_BUDGET_EXCEEDED',
        `this needs ${bytes} bytes of storage, more than tenant ${tenant}'s whole storage budget of ${limit} bytes (${where}); send less, or raise the budget`,
        { details: { tenant, bytes, storedBytes: total, maxBytes: limit } },
      );
    throw new AgentqError(
      'STORAGE_BUDGET_EXCEEDED',
      `tenant ${tenant} keeps ${total} bytes of run inputs and outputs; ${bytes} more would pass its storage budget of ${limit} bytes (${where}). Purge finished runs (DELETE /v1/runs/<id>?purge=true), wait for runs to expire, or raise the budget`,
      { retryable: true, retryAfterMs: 60_000, details: { tenant, bytes, storedBytes: total, maxBytes: limit } },
    );
  }

  /** A run finished: its output's bytes are charged too, and all of its bytes leave when its retention ends. */
  async settle(tenant: string, runId: string, outputBytes: number, now = Date.now()): Promise<void> {
    await this.run(SETTLE, tenant, [runId, outputBytes, now + this.options.retentionSeconds * 1000]);
  }

  /** Takes `id`'s bytes out at once (a refused admission undone). */
  async release(tenant: string, id: string): Promise<void> {
    await this.run(RELEASE, tenant, [id]);
  }

  /** The tenant's stored bytes as counted (charges that have expired are still in until the next charge). */
  async usage(tenant: string): Promise<number> {
    return Number((await this.redis.get(this.keys.tenantStorage(tenant).total)) ?? 0);
  }

  private run<T>(script: string, tenant: string, args: (string | number)[]): Promise<T> {
    const { total, charges, expiry } = this.keys.tenantStorage(tenant);
    return runScript<T>(this.redis, script, [total, charges, expiry, this.keys.tenantBudget(tenant).limits], args);
  }

  /** Live charges of runs that finished (their settle was lost) or are gone: given an expiry; → how many. */
  private async sweep(tenant: string, now: number): Promise<number> {
    const { expiry } = this.keys.tenantStorage(tenant);
    const ids = (await this.redis.zrangebyscore(expiry, '+inf', '+inf')).filter((id) => !id.startsWith('doc:'));
    if (ids.length === 0) return 0;
    const pipeline = slotPipeline(this.redis);
    for (const id of ids) pipeline.hget(this.keys.run(id).meta, 'status');
    const replies = (await pipeline.exec()) ?? [];
    const expiries: (string | number)[] = [];
    replies.forEach(([, status], index) => {
      if (typeof status !== 'string') expiries.push(0, ids[index]!);
      else if ((TERMINAL_STATUSES as readonly string[]).includes(status))
        expiries.push(now + this.options.retentionSeconds * 1000, ids[index]!);
    });
    if (expiries.length > 0) await this.redis.zadd(expiry, 'XX', ...expiries);
    return expiries.length / 2;
  }
}
