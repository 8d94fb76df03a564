import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { choosePlan } from '../../shared/operations/batches/autopilot-plan.js';
import { autopilotMetaOf } from '../../shared/operations/batches/batch-autopilot.js';
import { parseBatchMeta, type BatchMeta } from '../../shared/operations/batches/batch-meta.js';
import { REPLAN } from '../../shared/operations/batches/batch-scripts.js';
import { concurrencyFor } from '../../shared/operations/batches/submission-plan.js';
import type { Keys } from '../../shared/store/keys.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { ParkedStepWaker } from './parked-step-waker.js';
import { SETTLE_PENDING } from './provider-batch-scripts.js';

/**
 * Re-plans a planned batch on the collector's tick, for three reasons: the collector is where a provider
 * batch's age is seen (the one measure of how fast the Batch API is going that exists before it answers),
 * it holds a lease (one decision at a time across workers), and it already visits every batch with calls
 * parked. A provider batch older than the plan assumed stretches the batch mode's estimate; once that
 * misses the deadline, the cheapest mode that still meets it takes over: calls parked and not yet in a
 * provider batch are released to it (their steps woken), while provider batches already sent keep
 * running (their answers are paid). A batch its budget stopped has its parked calls failed instead.
 */
export class AutopilotReplanner {
  constructor(
    private readonly options: {
      redis: RedisConnection;
      keys: Keys;
      waker: ParkedStepWaker;
      logger: Logger;
      now: () => number;
    },
  ) {}

  async check(batchId: string): Promise<void> {
    const { redis, keys } = this.options;
    const meta = parseBatchMeta(await redis.hgetall(keys.batch(batchId).meta));
    if (!meta?.autopilot || meta.status !== 'running') return;
    if (meta.stopped) {
      await this.release(batchId, {
        s: 'error',
        e: {
          code: 'BUDGET_EXCEEDED',
          message: `batch ${batchId} stopped at its budget of $${meta.autopilot.budgetUsd}: this model call was not sent`,
          retryable: false,
        },
      });
      return;
    }
    // Calls parked by steps admitted just before the mode changed follow the new mode too.
    if (meta.mode !== 'batch') return void (await this.release(batchId, { s: 'live' }, meta.mode ?? 'live'));
    await this.replan(meta);
  }

  private async replan(meta: BatchMeta): Promise<void> {
    const autopilot = meta.autopilot!;
    if (autopilot.deadline === null) return;
    const { redis, keys, now: clock } = this.options;
    const now = clock();
    const age = await this.oldestUnfinishedAge(meta.id, now);
    if (age <= autopilot.speeds.batchTurnaroundMs) return;
    const finished = meta.done ? meta.done.completed + meta.done.failed + meta.done.cancelled : 0;
    const spent = Number((await redis.hget(keys.batch(meta.id).meta, 'spentUsd')) ?? 0);
    const asked = meta.concurrencyAsked ? meta.concurrency : undefined;
    const questions = Math.max(1, meta.total - finished);
    const input = {
      questions,
      concurrency: {
        live: concurrencyFor('live', asked, questions),
        flex: concurrencyFor('flex', asked, questions),
        batch: concurrencyFor('batch', asked, questions),
      },
      modes: autopilot.modes,
      now,
      deadline: autopilot.deadline,
      budgetUsd: autopilot.budgetUsd === null ? null : Math.max(0, autopilot.budgetUsd - spent),
      profile: autopilot.profile,
      questionCostUsd: autopilot.questionCostUsd,
      // Measured: the provider batch in flight is at least this slow.
      speeds: { ...autopilot.speeds, batchTurnaroundMs: age },
    };
    const plan = choosePlan(input);
    if ('refused' in plan || plan.mode === 'batch') return;
    const batchEstimate = plan.estimates.find((entry) => entry.mode === 'batch');
    if (batchEstimate && batchEstimate.finishAt <= autopilot.deadline) return;
    const next = autopilotMetaOf(input, plan, autopilot);
    next.plan.reason = `re-planned from batch: a provider batch has been running ${Math.round(age / 1000)} s (assumed ${Math.round(autopilot.speeds.batchTurnaroundMs / 1000)} s), so batch would miss the deadline; ${plan.reason}`;
    const concurrency = meta.concurrencyAsked ? '' : String(concurrencyFor(plan.mode, undefined, meta.total));
    const changed = await runScript<number>(
      redis,
      REPLAN,
      [keys.batch(meta.id).meta],
      ['batch', plan.mode, JSON.stringify(next), now, concurrency],
    );
    if (changed !== 1) return;
    this.options.logger.info({ batchId: meta.id, mode: plan.mode, reason: next.plan.reason }, 'batch re-planned');
    await this.release(meta.id, { s: 'live' }, plan.mode);
  }

  /** How long the oldest provider batch not yet done has been out (0: none). */
  private async oldestUnfinishedAge(batchId: string, now: number): Promise<number> {
    const { redis, keys } = this.options;
    const batchKeys = keys.providerBatch(batchId);
    const flushes = await redis.zrange(batchKeys.flushes, '0', '-1', 'WITHSCORES');
    for (let index = 0; index + 1 < flushes.length; index += 2) {
      const state = await redis.hget(batchKeys.flush(flushes[index]!), 'state');
      if (state !== 'done') return now - Number(flushes[index + 1]);
    }
    return 0;
  }

  /**
   * Calls parked and not yet in a provider batch get `verdict` and their steps are woken: `live` sends them
   * in the batch's mode now (counted there instead of in batch), an error fails them.
   */
  private async release(batchId: string, verdict: object, mode?: string): Promise<void> {
    const { redis, keys, waker } = this.options;
    const batchKeys = keys.providerBatch(batchId);
    if ((await redis.zcard(batchKeys.pending)) === 0) return;
    const released = await runScript<string[]>(
      redis,
      SETTLE_PENDING,
      [batchKeys.calls, batchKeys.pending, batchKeys.bodies],
      [JSON.stringify(verdict)],
    );
    if (released.length === 0) return;
    if (mode)
      await redis
        .multi()
        .hincrby(keys.batch(batchId).meta, 'calls_batch', -released.length)
        .hincrby(keys.batch(batchId).meta, `calls_${mode}`, released.length)
        .exec();
    await waker.wake(released);
  }
}
