import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { runScript } from '../../shared/redis/create-redis.js';
import type { PriceTable } from '../../shared/llm/price-table.js';
import type { ProviderBatches } from '../../shared/ports/provider-batches.js';
import type { Keys } from '../../shared/store/keys.js';
import type { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { StepQueues } from '../../shared/store/step-queues.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import { ParkedStepWaker } from './parked-step-waker.js';
import { FlushDriver, type FlushPoint } from './provider-batch-flush.js';
import { RENEW_LEASE, SETTLE_PENDING, TAKE_FLUSH } from './provider-batch-scripts.js';
import { luaScript } from '../../shared/redis/lua-script.js';
import { RedisClock } from './redis-clock.js';
import { AutopilotReplanner } from './autopilot-replan.js';

/** Release the collector's lease if this worker still holds it. KEYS and ARGV: the header of lua/release-lease-1.lua. */
const RELEASE_LEASE = luaScript(new URL('./lua/release-lease-1.lua', import.meta.url));

interface ProviderBatchCollectorOptions {
  redis: RedisConnection;
  keys: Keys;
  store: RedisRunStore;
  stepQueues: StepQueues;
  api: ProviderBatches;
  logger: Logger;
  telemetry: Telemetry;
  /** AGENTQ_PROVIDER_BATCH_MAX_REQUESTS */
  maxRequests: number;
  /** AGENTQ_PROVIDER_BATCH_MAX_BYTES */
  maxBytes: number;
  /** AGENTQ_PROVIDER_BATCH_FLUSH_MS */
  flushMs: number;
  /** AGENTQ_PROVIDER_BATCH_POLL_MS */
  pollMs: number;
  /** AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS @default 3600000 */
  resultsWaitMs?: number;
  /** AGENTQ_PROVIDER_BATCH_FALLBACK */
  fallback: 'none' | 'live';
  prices: PriceTable;
  batchPrices: PriceTable;
  /** How long a finished batch's provider-batch records are kept (AGENTQ_RETENTION_SECONDS). */
  retentionSeconds: number;
  /** AGENTQ_PROVIDER_BATCH_LEASE_MS: how soon another worker takes over from a dead collector. */
  leaseMs: number;
  /** Answers are counted against their tenant's budgets here (as live calls are). @default not counted */
  tenantBudget?: Pick<TenantBudget, 'settle'>;
  /** Tests: called at each point of a flush's life (chaos tests kill the worker there). */
  onPoint?: (point: FlushPoint, flushId: string) => void | Promise<void>;
}

/**
 * The worker side of the provider's Batch API: one worker of the deployment at a time (a
 * Redis lease) gathers the model calls parked by runs of opted-in batches into provider batches — when
 * AGENTQ_PROVIDER_BATCH_MAX_REQUESTS are pending, AGENTQ_PROVIDER_BATCH_FLUSH_MS after the first, or as
 * soon as every run of the batch in flight waits — and drives each through its flush's states
 * (FlushDriver) until its answers are saved and its steps woken. Its state is in Redis: a worker that
 * takes the lease over resumes where the last one stopped.
 */
export class ProviderBatchCollector {
  private readonly id = randomUUID();
  private readonly tickMs: number;
  private readonly leaseMs: number;
  private readonly waker: ParkedStepWaker;
  private readonly flushes: FlushDriver;
  private readonly clock: RedisClock;
  private readonly replanner: AutopilotReplanner;
  private timer: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private leader = false;

  constructor(private readonly options: ProviderBatchCollectorOptions) {
    this.tickMs = Math.min(
      1000,
      Math.max(50, Math.floor(Math.min(options.pollMs, options.flushMs || options.pollMs) / 2)),
    );
    // Short, and renewed on a timer of its own rather than between rounds: a round may wait on the provider
    // for a whole request timeout, while a dead collector must be replaced within a lease.
    this.leaseMs = options.leaseMs;
    this.clock = new RedisClock(options.redis);
    this.waker = new ParkedStepWaker(options.stepQueues, options.logger);
    this.replanner = new AutopilotReplanner({
      redis: options.redis,
      keys: options.keys,
      waker: this.waker,
      logger: options.logger,
      now: () => this.clock.now(),
    });
    this.flushes = new FlushDriver({
      redis: options.redis,
      keys: options.keys,
      store: options.store,
      api: options.api,
      waker: this.waker,
      logger: options.logger,
      telemetry: options.telemetry,
      pollMs: options.pollMs,
      resultsWaitMs: options.resultsWaitMs ?? 3_600_000,
      verdicts: { prices: options.prices, batchPrices: options.batchPrices, fallback: options.fallback },
      holdsLease: () => this.renew(),
      now: () => this.clock.now(),
      ...(options.tenantBudget ? { tenantBudget: options.tenantBudget } : {}),
      ...(options.onPoint ? { onPoint: options.onPoint } : {}),
    });
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.tick()
        .catch((error: unknown) =>
          this.options.logger.warn({ err: String(error) }, 'provider batch collector: tick failed'),
        )
        .finally(() => (this.ticking = undefined));
    }, this.tickMs);
    this.timer.unref();
    this.leaseTimer = setInterval(
      () =>
        void this.renew().catch((error: unknown) =>
          this.options.logger.warn({ err: String(error) }, 'provider batch collector: lease renewal failed'),
        ),
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    this.leaseTimer.unref();
  }

  /** Stops collecting (within `boundMs`), and gives the lease up so another worker takes over at once. */
  async stop(boundMs = 5000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    await Promise.race([this.ticking, new Promise((resolve) => setTimeout(resolve, boundMs).unref())]);
    if (this.leader) {
      const { redis, keys } = this.options;
      await redis.eval(RELEASE_LEASE, 1, keys.providerBatchesLease(), this.id).catch(() => undefined);
    }
  }

  /** One round (tests call it directly): take or keep the lease, then collect every active batch. */
  async tick(): Promise<void> {
    if (!(await this.renew())) return;
    await this.clock.sync();
    await this.waker.retry();
    const { redis, keys, logger } = this.options;
    for (const batchId of await redis.zrange(keys.providerBatchesActive(), '0', '-1')) {
      await this.collect(batchId).catch((error: unknown) =>
        logger.warn({ batchId, err: String(error) }, 'provider batch collector: batch round failed; retried next tick'),
      );
    }
  }

  /** Holds the lease (takes it when free); → whether this worker is the collector now. */
  private async renew(): Promise<boolean> {
    const { redis, keys } = this.options;
    const lease = keys.providerBatchesLease();
    const held = this.leader && (await runScript<number>(redis, RENEW_LEASE, [lease], [this.id, this.leaseMs])) === 1;
    this.leader = held || (await redis.set(lease, this.id, 'PX', this.leaseMs, 'NX')) === 'OK';
    return this.leader;
  }

  private async collect(batchId: string): Promise<void> {
    const { redis, keys } = this.options;
    const batchKeys = keys.providerBatch(batchId);
    const status = await redis.hget(keys.batch(batchId).meta, 'status');
    const cancelled = status === 'cancelled' || status === null;
    if (cancelled) await this.cancelPending(batchId);
    for (const flushId of await redis.zrange(batchKeys.flushes, '0', '-1')) {
      const state = await redis.hget(batchKeys.flush(flushId), 'state');
      if (state && state !== 'done') await this.flushes.advance(batchId, flushId, cancelled);
    }
    // A planned batch may move its parked calls to another mode (or fail them at its budget) before a flush takes them.
    if (!cancelled) await this.replanner.check(batchId);
    if (!cancelled) await this.flushIfDue(batchId);
    await this.forgetIfDone(batchId, status);
  }

  /** A new provider batch of the pending calls, when it is time: enough of them, long enough, or nothing else to wait for. */
  private async flushIfDue(batchId: string): Promise<void> {
    const { redis, keys, maxRequests, maxBytes, flushMs } = this.options;
    const batchKeys = keys.providerBatch(batchId);
    for (;;) {
      const pending = await redis.zcard(batchKeys.pending);
      if (pending === 0) return;
      const [, oldest] = await redis.zrange(batchKeys.pending, '0', '0', 'WITHSCORES');
      const inFlight = await redis.scard(keys.batch(batchId).inflight);
      const [next, total, concurrency] = (
        await redis.hmget(keys.batch(batchId).meta, 'next', 'total', 'concurrency')
      ).map(Number);
      // Every run of the batch in flight waits on a model call, and no other run can start (every question
      // dispatched, or every slot taken): none can finish, so no other call can come.
      const allWaiting = pending >= inFlight && (next! >= total! || inFlight >= concurrency!);
      // Both times are Redis's: a call is parked at Redis's TIME, whichever worker parked it.
      if (pending < maxRequests && this.clock.now() - Number(oldest) < flushMs && !allWaiting) return;
      const flushId = `${batchId}.f${await redis.incr(batchKeys.seq)}`;
      const taken = await runScript<number>(
        redis,
        TAKE_FLUSH,
        [batchKeys.pending, batchKeys.calls, batchKeys.bodies, batchKeys.flush(flushId), batchKeys.flushes],
        [maxRequests, maxBytes, flushId],
      );
      if (taken === 0) return;
      await this.options.onPoint?.('intent', flushId);
      await this.flushes.advance(batchId, flushId, false);
      if (taken < maxRequests && pending <= taken) return;
    }
  }

  /** The batch was cancelled: its calls not yet in a provider batch are settled, and every parked step woken (its run is being cancelled). */
  private async cancelPending(batchId: string): Promise<void> {
    const { redis, keys } = this.options;
    const batchKeys = keys.providerBatch(batchId);
    const verdict = JSON.stringify({
      s: 'error',
      e: { code: 'CANCELLED', message: 'the batch was cancelled before this model call was sent', retryable: false },
    });
    const settled = await runScript<string[]>(
      redis,
      SETTLE_PENDING,
      [batchKeys.calls, batchKeys.pending, batchKeys.bodies],
      [verdict],
    );
    if ((await redis.hsetnx(keys.batch(batchId).meta, 'providerBatchCancelSeen', '1')) === 1) {
      // Once: every call of the batch (parked, or in a provider batch still being cancelled) wakes its step now.
      await this.waker.wake(await redis.hkeys(batchKeys.calls));
    } else if (settled.length > 0) await this.waker.wake(settled);
  }

  /** A batch that ended with nothing left to collect leaves the work list; its records expire with it. */
  private async forgetIfDone(batchId: string, status: string | null): Promise<void> {
    if (status === 'running') return;
    const { redis, keys, retentionSeconds } = this.options;
    const batchKeys = keys.providerBatch(batchId);
    if ((await redis.zcard(batchKeys.pending)) > 0) return;
    const flushIds = await redis.zrange(batchKeys.flushes, '0', '-1');
    for (const flushId of flushIds) if ((await redis.hget(batchKeys.flush(flushId), 'state')) !== 'done') return;
    const pipeline = redis.pipeline();
    for (const key of [
      batchKeys.calls,
      batchKeys.bodies,
      batchKeys.flushes,
      batchKeys.seq,
      ...flushIds.map(batchKeys.flush),
    ])
      pipeline.expire(key, retentionSeconds);
    await pipeline.exec();
    await redis.zrem(keys.providerBatchesActive(), batchId);
  }
}
