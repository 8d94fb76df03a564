import type { RedisConnection } from '../../redis/connect-redis.js';
import { AgentqError } from '../../contracts/errors.js';
import type { Keys } from '../../store/keys.js';
import type { RedisMetrics } from '../metrics/redis-metrics.js';
import { runScript } from '../../redis/create-redis.js';
import { sharedRoundTrip } from '../../redis/shared-round-trip.js';
import {
  LIMIT_FIELDS,
  microsToUsd,
  parseTenantBudgetLimits,
  usdToMicros,
  type TenantBudgetLimits,
} from '../../config/tenant-budget-limits.js';
import { luaScript } from '../../redis/lua-script.js';

/**
 * KEYS: 1 limits · 2 day usage · 3 month usage · 4 reservations
 * ARGV: 1 member `<callId>|<tokens>|<costMicros>` ('' = no estimate yet) · 2 tokens · 3 cost µ$ · 4 now ms
 *       5 reservation ttl ms · 6..9 default tokensPerDay, tokensPerMonth, costMicrosPerDay, costMicrosPerMonth ('' = none)
 * → {1} reserved (or nothing to hold: the tenant has no limits) · {2} the tenant has limits, ask again with
 * the estimate · {0, field, limit, usedAndReserved} refused.
 * Usage + live reservations + this estimate must fit every limit; the estimate is then held as a
 * reservation, so concurrent callers see each other's calls before any of them has been counted.
 */
const RESERVE = luaScript(new URL('./lua/reserve-budget-4.lua', import.meta.url));

/**
 * KEYS: 1 day usage · 2 month usage · 3 reservations · 4 settled call ids
 * ARGV: 1 now ms · 2 day ttl s · 3 month ttl s · 4 settled-id memory ms · then per call: reservation member
 *       ('' = none), call id, tokens, cost µ$, graph, model
 * → per call: 1 counted · 0 this call id was counted already (a re-delivered step).
 */
const SETTLE = luaScript(new URL('./lua/settle-budget-4.lua', import.meta.url));

/** An estimate held against a tenant's budgets until the call is settled or released. */
interface BudgetReservation {
  readonly tenant: string;
  /** '' when nothing is held (the tenant has no limits). */
  readonly member: string;
}

/** What a model call may spend, held before it is made. */
interface BudgetEstimate {
  /** Unique per paid call and stable across re-deliveries (see BudgetSpend). */
  callId: string;
  tokens: number;
  costUsd: number;
}

/** What one model call really spent, counted once per `callId`. */
interface BudgetSpend {
  /** Unique per paid call and stable across re-deliveries (e.g. `<runId>.<step>`): counting is idempotent on it. */
  callId: string;
  tokens: number;
  costUsd: number;
  graph: string;
  model: string;
}

interface UsageTotals {
  tokens: number;
  costUsd: number;
  calls: number;
}

export interface UsagePeriod extends UsageTotals {
  /** `YYYY-MM-DD` for a day, `YYYY-MM` for a month (UTC). */
  period: string;
  byGraph: Record<string, Omit<UsageTotals, 'calls'>>;
  byModel: Record<string, Omit<UsageTotals, 'calls'>>;
}

interface TenantBudgetOptions {
  /** Limits of a tenant an admin has not set limits for. @default {} (unlimited) */
  defaults?: TenantBudgetLimits;
  /** A reservation not settled by then (its worker died) stops counting. @default 600000 (10 min) */
  reservationTtlMs?: number;
  /** How long per-day usage is kept. @default 35 days */
  dayUsageTtlSeconds?: number;
  /** How long per-month usage is kept. @default 400 days */
  monthUsageTtlSeconds?: number;
  /** Where counted spend also goes as Prometheus counters per tenant. @default none */
  metrics?: Pick<RedisMetrics, 'tenantUsage'>;
}

const SETTLED_MEMORY_MS = 2 * 24 * 3600_000;

/** A call's spend waiting for its tenant's next settle script. */
interface PendingSettle {
  member: string;
  spend: BudgetSpend;
}

interface SettleBatch {
  calls: PendingSettle[];
  write: () => Promise<Map<PendingSettle, number>>;
}

/**
 * Per-tenant token and cost budgets per UTC day and month, shared by every worker through Redis.
 *
 * A paid call goes: `reserve` (before the model call; refuses with TENANT_BUDGET_EXCEEDED when usage +
 * live reservations + the estimate would pass a limit) → the call → `settle` (right after the memo write;
 * counts the real spend once per call id and drops the reservation) — or `release` if nothing was spent.
 * Bound: the estimate is held while the call runs, so concurrent workers cannot together pass a limit by
 * their estimates; a limit is passed only by what single calls spent beyond their estimate (at most one
 * step's overrun per call in flight), and by a worker dying between its model call and `settle` (its
 * reservation expires after `reservationTtlMs`; the spend is then lost, never counted twice).
 */
export class TenantBudget {
  private readonly defaults: TenantBudgetLimits;
  private readonly reservationTtlMs: number;
  private readonly dayTtl: number;
  private readonly monthTtl: number;
  private readonly metrics: Pick<RedisMetrics, 'tenantUsage'> | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    {
      defaults = {},
      reservationTtlMs = 600_000,
      dayUsageTtlSeconds = 35 * 86_400,
      monthUsageTtlSeconds = 400 * 86_400,
      metrics,
    }: TenantBudgetOptions = {},
  ) {
    this.defaults = parseTenantBudgetLimits(defaults);
    this.reservationTtlMs = reservationTtlMs;
    this.dayTtl = dayUsageTtlSeconds;
    this.monthTtl = monthUsageTtlSeconds;
    this.metrics = metrics;
  }

  /** Replaces a tenant's limits (validated; INVALID_INPUT names the bad field). `{}` means unlimited. */
  async setLimits(tenant: string, limits: unknown): Promise<TenantBudgetLimits> {
    const parsed = parseTenantBudgetLimits(limits);
    const key = this.keys.tenantBudget(tenant).limits;
    const fields = toFields(parsed);
    // An empty hash would fall back to the defaults: an explicit `{}` is stored as a marker field instead.
    await this.redis
      .multi()
      .del(key)
      .hset(key, { set: '1', ...fields })
      .exec();
    return parsed;
  }

  /** The tenant's limits and whether they are its own or the configured defaults. */
  async getLimits(tenant: string): Promise<{ limits: TenantBudgetLimits; source: 'tenant' | 'defaults' }> {
    const stored = await this.redis.hgetall(this.keys.tenantBudget(tenant).limits);
    if (Object.keys(stored).length === 0) return { limits: this.defaults, source: 'defaults' };
    const limits: TenantBudgetLimits = {};
    for (const [name, field] of Object.entries(LIMIT_FIELDS) as [keyof TenantBudgetLimits, string][]) {
      const value = stored[field];
      if (value === undefined) continue;
      limits[name] = field.startsWith('cost') ? microsToUsd(Number(value)) : Number(value);
    }
    return { limits, source: 'tenant' };
  }

  /**
   * Holds an estimate before a model call; throws TENANT_BUDGET_EXCEEDED (not retryable) when it does not
   * fit. A lazy estimate (`estimate()`) is made only when the tenant has limits: a tenant without any
   * holds nothing, and counting a prompt's tokens is most of a model call's own CPU. Whether it has
   * limits is asked once for the lazy calls of the same moment (each told by a look sent after it asked);
   * `at` (ms, tests) asks alone at that time. @default now
   */
  async reserve(
    tenant: string,
    request: BudgetEstimate | { callId: string; estimate: () => Promise<Omit<BudgetEstimate, 'callId'>> },
    at?: number,
  ): Promise<BudgetReservation> {
    const now = at ?? Date.now();
    let estimate: BudgetEstimate;
    if ('estimate' in request) {
      const [verdict] = await (at === undefined
        ? this.limitsLook(tenant)()
        : this.reserveScript(tenant, ['', '', ''], now));
      if (verdict === 1) return { tenant, member: '' };
      estimate = { callId: request.callId, ...(await request.estimate()) };
    } else estimate = request;
    const tokens = Math.max(0, Math.ceil(estimate.tokens));
    const cost = Math.max(0, usdToMicros(estimate.costUsd));
    const member = `${estimate.callId}|${tokens}|${cost}`;
    const result = await this.reserveScript(tenant, [member, tokens, cost], now);
    if (result[0] === 1) return { tenant, member };
    const [, field, limit, used] = result;
    const isCost = field!.startsWith('cost');
    const shown = (value: string) => (isCost ? `$${microsToUsd(Number(value))}` : `${value} tokens`);
    const name = (Object.keys(LIMIT_FIELDS) as (keyof TenantBudgetLimits)[]).find(
      (key) => LIMIT_FIELDS[key] === field,
    )!;
    throw new AgentqError(
      'TENANT_BUDGET_EXCEEDED',
      `tenant ${tenant} has used ${shown(used!)} of its ${name} budget of ${shown(limit!)}; this call needs about ${isCost ? `$${microsToUsd(cost)}` : `${tokens} tokens`} more. Raise the limit (PUT /v1/admin/tenants/${tenant}/limits) or wait for the next ${name.endsWith('Day') ? 'UTC day' : 'UTC month'}`,
      {
        details: {
          tenant,
          limit: name,
          limitValue: isCost ? microsToUsd(Number(limit)) : Number(limit),
          used: isCost ? microsToUsd(Number(used)) : Number(used),
          estimate: isCost ? microsToUsd(cost) : tokens,
        },
      },
    );
  }

  /** Whether a tenant has limits, asked by the calls of the same moment together (sharedRoundTrip), by tenant. */
  private readonly limitsLooks = new Map<string, () => Promise<[number, string?, string?, string?]>>();

  /** The reserve script without an estimate ({1}: no limits, {2}: ask with one), shared by concurrent calls. */
  private limitsLook(tenant: string): () => Promise<[number, string?, string?, string?]> {
    let look = this.limitsLooks.get(tenant);
    if (!look) {
      look = sharedRoundTrip(() => this.reserveScript(tenant, ['', '', ''], Date.now()));
      this.limitsLooks.set(tenant, look);
    }
    return look;
  }

  private reserveScript(
    tenant: string,
    [member, tokens, cost]: [string, number | '', number | ''],
    now: number,
  ): Promise<[number, string?, string?, string?]> {
    const keys = this.keys.tenantBudget(tenant);
    const defaults = toFields(this.defaults);
    return runScript<[number, string?, string?, string?]>(
      this.redis,
      RESERVE,
      [keys.limits, keys.day(utcDay(now)), keys.month(utcMonth(now)), keys.reservations],
      [
        member,
        tokens,
        cost,
        now,
        this.reservationTtlMs,
        ...Object.values(LIMIT_FIELDS).map((field) => defaults[field] ?? ''),
      ],
    );
  }

  /**
   * Counts a call's real spend (once per call id) and drops its reservation. → false if already counted.
   * The calls of a tenant that settle at the same moment share one script (each counted by one sent after
   * it asked, sharedRoundTrip), their increments summed per field: a worker with many paid calls in flight
   * counts them a few times a round trip, not once per call. `now` (ms, tests) counts alone at that time.
   */
  async settle(
    tenant: string,
    reservation: BudgetReservation | undefined,
    spend: BudgetSpend,
    now?: number,
  ): Promise<boolean> {
    const call: PendingSettle = { member: reservation?.member ?? '', spend };
    let counted: boolean;
    if (now === undefined) {
      let batch = this.settling.get(tenant);
      if (!batch) {
        const created: SettleBatch = { calls: [], write: sharedRoundTrip(() => this.settleNow(tenant, created)) };
        this.settling.set(tenant, (batch = created));
      }
      batch.calls.push(call);
      counted = (await batch.write()).get(call) === 1;
    } else counted = (await this.settleScript(tenant, [call], now))[0] === 1;
    // After the count, not inside it: the metrics hash is another Cluster slot. A crash in between leaves
    // Prometheus one call short; /v1/usage and the budgets stay exact.
    if (counted) await this.metrics?.tenantUsage(tenant, spend.tokens, spend.costUsd);
    return counted;
  }

  /** Calls waiting to be counted, by tenant, with the shared write that takes them. */
  private readonly settling = new Map<string, SettleBatch>();

  /** The calls left for this write, counted in one script: → each call's verdict. */
  private async settleNow(tenant: string, batch: SettleBatch): Promise<Map<PendingSettle, number>> {
    const calls = batch.calls;
    batch.calls = [];
    const verdicts = await this.settleScript(tenant, calls, Date.now());
    return new Map(calls.map((call, index) => [call, verdicts[index]!]));
  }

  private settleScript(tenant: string, calls: PendingSettle[], now: number): Promise<number[]> {
    const keys = this.keys.tenantBudget(tenant);
    const args: (string | number)[] = [now, this.dayTtl, this.monthTtl, SETTLED_MEMORY_MS];
    for (const { member, spend } of calls)
      args.push(
        member,
        spend.callId,
        Math.max(0, Math.round(spend.tokens)),
        Math.max(0, usdToMicros(spend.costUsd)),
        spend.graph,
        spend.model,
      );
    return runScript<number[]>(
      this.redis,
      SETTLE,
      [keys.day(utcDay(now)), keys.month(utcMonth(now)), keys.reservations, keys.settled],
      args,
    );
  }

  /** Drops a reservation whose call spent nothing (it failed before the provider answered). */
  async release(reservation: BudgetReservation): Promise<void> {
    if (reservation.member === '') return;
    await this.redis.zrem(this.keys.tenantBudget(reservation.tenant).reservations, reservation.member);
  }

  /** The tenant's spend on each of the last `days` UTC days (newest first) and this month, per graph and model. */
  async usage(
    tenant: string,
    { days = 7, now = Date.now() }: { days?: number; now?: number } = {},
  ): Promise<{ days: UsagePeriod[]; month: UsagePeriod }> {
    const keys = this.keys.tenantBudget(tenant);
    const periods = Array.from({ length: days }, (_unused, index) => utcDay(now - index * 86_400_000));
    const pipeline = this.redis.pipeline();
    for (const day of periods) pipeline.hgetall(keys.day(day));
    pipeline.hgetall(keys.month(utcMonth(now)));
    const replies = ((await pipeline.exec()) ?? []).map(([error, value]) => {
      if (error) throw error;
      return value as Record<string, string>;
    });
    return {
      days: periods.map((day, index) => toPeriod(day, replies[index]!)),
      month: toPeriod(utcMonth(now), replies[days]!),
    };
  }
}

function toFields(limits: TenantBudgetLimits): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, field] of Object.entries(LIMIT_FIELDS) as [keyof TenantBudgetLimits, string][]) {
    const value = limits[name];
    if (value !== undefined) fields[field] = String(field.startsWith('cost') ? usdToMicros(value) : value);
  }
  return fields;
}

function toPeriod(period: string, hash: Record<string, string>): UsagePeriod {
  const result: UsagePeriod = {
    period,
    tokens: Number(hash.tokens ?? 0),
    costUsd: microsToUsd(Number(hash.costMicros ?? 0)),
    calls: Number(hash.calls ?? 0),
    byGraph: {},
    byModel: {},
  };
  for (const [field, value] of Object.entries(hash)) {
    const match = /^(tokens|costMicros):(graph|model):(.*)$/s.exec(field);
    if (!match) continue;
    const [, measure, kind, name] = match as unknown as [string, 'tokens' | 'costMicros', 'graph' | 'model', string];
    const bucket = kind === 'graph' ? result.byGraph : result.byModel;
    const entry = (bucket[name] ??= { tokens: 0, costUsd: 0 });
    if (measure === 'tokens') entry.tokens = Number(value);
    else entry.costUsd = microsToUsd(Number(value));
  }
  return result;
}

/** `YYYY-MM-DD` of a time in UTC: budgets reset at midnight UTC. */
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
/** `YYYY-MM` of a time in UTC. */
const utcMonth = (ms: number): string => new Date(ms).toISOString().slice(0, 7);
