import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { StepAbort } from '../../shared/contracts/abort.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { BatchMode } from '../../shared/operations/batches/autopilot-plan.js';
import { ADMIT_CALL, SETTLE_CALL } from '../../shared/operations/batches/batch-scripts.js';
import type { Keys } from '../../shared/store/keys.js';

/** A model call sent live or on flex for a batch: `generate` sends it in its mode (a refused flex call as its plan says). */
export interface LiveCall {
  mode: 'live' | 'flex';
  /** Sends the request through `send`, with `{serviceTier: 'flex'}` in flex mode; a failed call gives its hold back. */
  generate<T>(send: (tier: { serviceTier?: 'flex' }) => Promise<T>): Promise<T>;
}

/** ADMIT_CALL's reply. */
type Admission = ['send', BatchMode, 'live' | 'retry'] | ['stopped', string] | ['closed', string];

/** A provider's refusal of a flex request for capacity (the adapter maps OpenAI's 429 `resource_unavailable`). */
export function isFlexRefusal(error: unknown): boolean {
  return AgentqError.isInstance(error) && error.code === 'FLEX_UNAVAILABLE';
}

/**
 * The model calls of a planned batch (a deadline, a budget, or flex only): each asks the batch's meta for
 * its mode and the budget's leave in one script (ADMIT_CALL), holds its estimated cost while in flight,
 * and settles it with its real cost once answered (SETTLE_CALL) — or gives it back when it failed.
 */
export class PlannedCalls {
  constructor(private readonly options: { redis: RedisConnection; keys: Keys }) {}

  /** The hold's name: one per call of a step (a retried attempt keeps its one hold). */
  static holdOf(runId: string, stepId: string, key: string): string {
    return `${runId}|${stepId}|${key}`;
  }

  /**
   * The call's mode, or the budget's stop (BUDGET_EXCEEDED, not retried): `'batch'` parks it, a LiveCall
   * sends it, `undefined` (the batch is over: a failed run retried later) calls live as any run would.
   */
  async admit(
    { batchId, runId, hold }: { batchId: string; runId: string; hold: string },
    estimateUsd: number,
  ): Promise<'batch' | LiveCall | undefined> {
    const { redis, keys } = this.options;
    const batchKeys = keys.batch(batchId);
    const [verdict, first, fallback] = await runScript<Admission>(
      redis,
      ADMIT_CALL,
      [batchKeys.meta, batchKeys.holds, batchKeys.usage],
      [hold, estimateUsd.toFixed(12), Date.now(), runId],
    );
    if (verdict === 'stopped') {
      const stopped = JSON.parse(first) as { left: { questions: number; budgetUsd: number } };
      const budget = await redis.hget(batchKeys.meta, 'autopilot');
      const budgetUsd = budget ? (JSON.parse(budget) as { budgetUsd: number | null }).budgetUsd : null;
      throw new AgentqError(
        'BUDGET_EXCEEDED',
        `batch ${batchId} stopped at its budget of $${budgetUsd}: what it spent and has in flight leaves no room for this model call, so it was not sent (${stopped.left.questions} question(s) left unanswered, $${stopped.left.budgetUsd.toFixed(4)} unspent); submit the rest again with a larger budgetUsd`,
        { details: { batchId, budgetUsd, stopped } },
      );
    }
    if (verdict === 'closed') {
      if (first === 'cancelled')
        throw new StepAbort('cancel', `batch ${batchId} was cancelled; its model calls are not sent`);
      return undefined;
    }
    if (first === 'batch') return 'batch';
    return this.liveCall(batchId, hold, first, fallback!);
  }

  /** The call's hold becomes its cost (0: it failed, or nothing was paid); once per call. */
  async settle(batchId: string, hold: string, costUsd: number): Promise<void> {
    const batchKeys = this.options.keys.batch(batchId);
    await runScript(this.options.redis, SETTLE_CALL, [batchKeys.meta, batchKeys.holds], [hold, costUsd.toFixed(12)]);
  }

  private liveCall(batchId: string, hold: string, mode: 'live' | 'flex', fallback: 'live' | 'retry'): LiveCall {
    return {
      mode,
      generate: async <T>(send: (tier: { serviceTier?: 'flex' }) => Promise<T>): Promise<T> => {
        try {
          if (mode === 'live') return await send({});
          try {
            return await send({ serviceTier: 'flex' });
          } catch (error) {
            if (!isFlexRefusal(error)) throw error;
            if (fallback === 'retry')
              throw new AgentqError(
                'FLEX_UNAVAILABLE',
                `the provider refused this flex request for capacity; batch ${batchId}'s plan has time to retry it on flex`,
                { retryable: true, cause: error },
              );
            // The deadline needs it: sent live now, and counted as a live call.
            await this.options.redis
              .multi()
              .hincrby(this.options.keys.batch(batchId).meta, 'calls_flex', -1)
              .hincrby(this.options.keys.batch(batchId).meta, 'calls_live', 1)
              .exec();
            return await send({});
          }
        } catch (error) {
          await this.settle(batchId, hold, 0).catch(() => undefined);
          throw error;
        }
      },
    };
  }
}
