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

/** KEYS: 1 total · 2 charges · 3 expiry of a tenant's run ledger on one shard · ARGV: 1 now ms → its bytes there */
const SWEEP_RUNS = luaScript(new URL('./lua/sweep-run-storage-3.lua', import.meta.url));

/** KEYS: 1 total · 2 charges · 3 expiry · ARGV: 1 id · 2 bytes to add · 3 expires at (ms) */
const SETTLE = luaScript(new URL('./lua/settle-storage-3.lua', import.meta.url));

/** KEYS: 1 total · 2 charges · 3 expiry · ARGV: 1 id → bytes released */
const RELEASE = luaScript(new URL('./lua/release-storage-3.lua', import.meta.url));

/** How long a process goes before it checks a tenant's live charges for runs whose finish was never settled. */
const SWEEP_EVERY_MS = 60_000;

/** What `charge` did: a new charge, one the id held already. */
type StorageCharge = 'new' | 'held';

/**
 * A tenant's storage budget: every byte its runs and documents keep in Redis, against `storageBytes` of
 * its limits or AGENTQ_TENANT_MAX_BYTES.
 * - A run's bytes — meta, input, state, history, step log, events, recording, output, a fork's copy, the
 *   earlier turns a conversation's run starts with — are charged by the run store's scripts in the same
 *   call that stores them, to the tenant's ledger on the run's shard (Keys.tenantRunStorage), and leave
 *   when the run's keys expire (retention) or it is purged: counted down when the tenant is next admitted.
 *   Not counted: a step's memos and a parallel superstep's writes, which its commit deletes.
 * - A run is admitted when its first bytes (its input, a fork's copy) fit beside what the tenant keeps
 *   (`admit`); once admitted it runs to its end and everything it stores is charged, past the budget if
 *   need be: the tenant's next run is refused until enough has left.
 * - Documents are charged by id here (`doc:<docId>`), in the tenant's `{budget:<tenant>}` ledger, when
 *   they are handed in; so were runs before the run ledgers existed (their charges expire as before).
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
    return this.chargeOrCheck(tenant, id, bytes, now, false);
  }

  /**
   * A run may start whose first `bytes` fit beside what the tenant keeps: throws STORAGE_BUDGET_EXCEEDED
   * as `charge` does, charges nothing (the run's scripts charge what it stores, as they store it).
   */
  async admit(tenant: string, runId: string, bytes: number, now = Date.now()): Promise<void> {
    await this.chargeOrCheck(tenant, runId, bytes, now, true);
  }

  /** The bytes the tenant's runs keep, over its ledgers on every shard, once the expired ones are out. */
  async runBytes(tenant: string, now = Date.now()): Promise<number> {
    const totals = await Promise.all(
      Array.from({ length: this.keys.shards }, (_, shard) => {
        const { total, charges, expiry } = this.keys.tenantRunStorage(tenant, shard);
        return runScript<number>(this.redis, SWEEP_RUNS, [total, charges, expiry], [now]);
      }),
    );
    return totals.reduce((sum, bytes) => sum + Number(bytes), 0);
  }

  private async chargeOrCheck(
    tenant: string,
    id: string,
    bytes: number,
    now: number,
    checkOnly: boolean,
  ): Promise<StorageCharge> {
    const elsewhere = await this.runBytes(tenant, now);
    const attempt = () =>
      this.run<[number, number, number]>(CHARGE, tenant, [
        id,
        bytes,
        now,
        this.options.defaultMaxBytes,
        elsewhere,
        checkOnly ? '1' : '0',
      ]);
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
      `tenant ${tenant} keeps ${total} bytes of runs and documents; ${bytes} more would pass its storage budget of ${limit} bytes (${where}). Purge finished runs (DELETE /v1/runs/<id>?purge=true), wait for runs to expire, or raise the budget`,
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

  /** The tenant's stored bytes as counted, runs and documents (charges that have expired are still in until the next charge). */
  async usage(tenant: string): Promise<number> {
    const ledgers = Array.from(
      { length: this.keys.shards },
      (_, shard) => this.keys.tenantRunStorage(tenant, shard).total,
    );
    const totals = await Promise.all(
      [this.keys.tenantStorage(tenant).total, ...ledgers].map((key) => this.redis.get(key)),
    );
    return totals.reduce((sum, bytes) => sum + Number(bytes ?? 0), 0);
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
