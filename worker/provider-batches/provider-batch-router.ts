import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { StepAbort } from '../../shared/contracts/abort.js';
import { BoundedMemo } from '../../shared/contracts/bounded-memo.js';
import { AgentqError, type ErrorRecord } from '../../shared/contracts/errors.js';
import type { NodeContext, PaidCall } from '../../shared/graph/node-context.js';
import { ParkSignal } from '../../shared/graph/park-signal.js';
import type { LanguageModelRequest, LanguageModelResponse, TokenUsage } from '../../shared/ports/language-model.js';
import type { ProviderBatches } from '../../shared/ports/provider-batches.js';
import type { Keys } from '../../shared/store/keys.js';
import type { AutopilotMeta } from '../../shared/operations/batches/batch-meta.js';
import { batchIdOfRun, callIdOf } from './provider-batch-call.js';
import { REGISTER_CALL } from './provider-batch-scripts.js';
import { PlannedCalls, type LiveCall } from './planned-call.js';

export type { LiveCall } from './planned-call.js';

/** An answer that came through a provider batch, as the step's memo holds it. */
export type BatchedModelResponse = LanguageModelResponse & {
  usage: TokenUsage;
  usageEstimated: boolean;
  /** The provider batch that answered (its id at the provider). */
  providerBatch: string;
};

interface ProviderBatchRouterOptions {
  redis: RedisConnection;
  keys: Keys;
  api: ProviderBatches;
  /** How long a parked step sleeps unless woken (AGENTQ_PROVIDER_BATCH_PARK_MS). */
  parkMs: number;
}

declare module '../../shared/graph/node-context.js' {
  interface Services {
    /** Model calls of runs whose batch asked for the provider's Batch API; absent: every call is live. */
    providerBatchRouter?: ProviderBatchRouter;
  }
}

/** Batches whose kind was read, by id (neither changes for a batch); bounded. */
const CACHE_LIMIT = 10_000;

/** How a batch's calls are routed: through the Batch API only, by its plan's mode (which may change), or live. */
interface BatchKind {
  providerBatch: boolean;
  /** Its first question warms the provider's prompt cache: the rest wait for its first answer. */
  warmup: boolean;
  planned: boolean;
  /** A call's estimated cost, held against a planned batch's budget while it is in flight (the dearest mode's). */
  callEstimateUsd: number;
}

/**
 * Decides, for one model call, whether it goes through the provider's Batch API (its run belongs to a
 * batch submitted with `providerBatch`), and if so hands its request to the collector and parks the
 * step (ParkSignal): the step holds no worker and no lock until the collector saves the answer in its
 * memo and wakes it. A woken step finds the answer with `context.memo` and never gets here; an error
 * answer is thrown here once (the step's retry policy decides), and a call the collector sends back
 * live (AGENTQ_PROVIDER_BATCH_FALLBACK=live) returns undefined: the caller calls live.
 */
export class ProviderBatchRouter {
  private readonly kinds = new BoundedMemo<string, BatchKind>({ limit: CACHE_LIMIT });
  private readonly planned: PlannedCalls;
  private warmed: (batchId: string) => Promise<void> = async () => undefined;

  constructor(private readonly options: ProviderBatchRouterOptions) {
    this.planned = new PlannedCalls(options);
  }

  /**
   * undefined: call live, as a run outside a batch. A LiveCall: send it that way (live or flex, its batch's
   * mode). Otherwise the saved answer, or it throws (a park, the provider's error, a cancel, the budget's stop).
   */
  async send(
    context: Pick<NodeContext, 'runId' | 'stepId' | 'attempt'>,
    key: string,
    request: Omit<LanguageModelRequest, 'abortSignal'>,
    paid?: PaidCall,
  ): Promise<BatchedModelResponse | LiveCall | undefined> {
    const batchId = batchIdOfRun(context.runId);
    if (!batchId) return undefined;
    const kind = await this.kindOf(batchId);
    if (kind.planned) {
      const hold = PlannedCalls.holdOf(context.runId, context.stepId, key);
      const admitted = await this.planned.admit({ batchId, runId: context.runId, hold }, kind.callEstimateUsd);
      if (admitted !== 'batch') return admitted;
      return this.park(batchId, context, key, request, paid).catch(async (error: unknown) => {
        if (!(error instanceof ParkSignal)) await this.planned.settle(batchId, hold, 0);
        throw error;
      });
    }
    if (!kind.providerBatch) return this.countedLive(batchId, context.runId);
    return this.park(batchId, context, key, request, paid);
  }

  /** What dispatches a batch's other questions once its warm-up question's first call answered (the worker's dispatcher). */
  onWarm(dispatch: (batchId: string) => Promise<void>): void {
    this.warmed = dispatch;
  }

  /**
   * A batch's call was answered at `costUsd`: a planned batch's hold against the budget becomes that cost
   * (once); the first answer of a warming batch lets its other questions go (their shared prefix is cached now).
   */
  async settle(context: Pick<NodeContext, 'runId' | 'stepId'>, key: string, costUsd: number): Promise<void> {
    const batchId = batchIdOfRun(context.runId);
    if (!batchId) return;
    const kind = await this.kindOf(batchId);
    if (kind.warmup) {
      kind.warmup = false;
      if ((await this.options.redis.hdel(this.options.keys.batch(batchId).meta, 'warmup')) === 1)
        await this.warmed(batchId);
    }
    if (kind.planned)
      await this.planned.settle(batchId, PlannedCalls.holdOf(context.runId, context.stepId, key), costUsd);
  }

  /** A live call of a batch without a plan: counted (the batch's calls by mode) while it is sent. */
  private countedLive(batchId: string, runId: string): LiveCall {
    const { redis, keys } = this.options;
    return {
      mode: 'live',
      generate: async (send) => {
        const counting = countCall(redis, keys, batchId, runId, 'live');
        try {
          return await send({});
        } finally {
          await counting.catch(() => undefined);
        }
      },
    };
  }

  /** Parks the call in the batch's next provider batch (or hands over its answer, error or live verdict). */
  private async park(
    batchId: string,
    context: Pick<NodeContext, 'runId' | 'stepId' | 'attempt'>,
    key: string,
    request: Omit<LanguageModelRequest, 'abortSignal'>,
    paid?: PaidCall,
  ): Promise<BatchedModelResponse | undefined> {
    const { redis, keys, api, parkMs } = this.options;
    const customId = callIdOf({ runId: context.runId, stepId: context.stepId, key, attempt: context.attempt });
    const body = api.requestBody(request);
    const line = JSON.stringify({ custom_id: customId, method: 'POST', url: api.endpoint, body });
    // The request leaves this step here: the claim and the cursor are checked once more.
    await paid?.confirm();
    const batchKeys = keys.providerBatch(batchId);
    const [state, held] = await runScript<[string, string]>(
      redis,
      REGISTER_CALL,
      [batchKeys.calls, batchKeys.pending, batchKeys.bodies, keys.batch(batchId).meta],
      [customId, line, String(body['model'] ?? '')],
    );
    // 'closed' answers the batch's status; every other state the call's record.
    const call = held && state !== 'closed' ? (JSON.parse(held) as { f?: string; e?: ErrorRecord }) : {};
    // Registered now: a batch without a plan counts it here (a planned batch counted it when admitted).
    if (state === 'pending' && held === '' && !(await this.kindOf(batchId)).planned)
      await countCall(redis, keys, batchId, context.runId, 'batch');
    switch (state) {
      case 'pending':
      case 'assigned':
        // The collector's work list (another slot than the batch's keys: its own command).
        // Its score only orders the list (no worker compares it with its own clock).
        await redis.zadd(keys.providerBatchesActive(), 'NX', Date.now(), batchId);
        throw new ParkSignal(parkMs, { providerBatch: { batch: batchId, flush: call.f ?? null, request: customId } });
      case 'applied':
        return this.savedAnswer(context, key);
      case 'error': {
        const error = call.e ?? {
          code: 'PROVIDER_ERROR',
          message: 'the provider batch answered with an error',
          retryable: true,
        };
        throw new AgentqError(error.code, error.message, { retryable: error.retryable, details: error.details });
      }
      case 'live':
        return undefined;
      default:
        if (held === 'cancelled')
          throw new StepAbort('cancel', `batch ${batchId} was cancelled; its model calls are not sent`);
        // The batch is over (a failed run of it retried later): nothing collects for it any more, so live.
        return undefined;
    }
  }

  private async kindOf(batchId: string): Promise<BatchKind> {
    const known = this.kinds.get(batchId);
    if (known) return known;
    const [flag, mode, autopilot, warmup] = await this.options.redis.hmget(
      this.options.keys.batch(batchId).meta,
      'providerBatch',
      'mode',
      'autopilot',
      'warmup',
    );
    const plan = autopilot ? (JSON.parse(autopilot) as AutopilotMeta) : null;
    const kind = {
      providerBatch: flag === '1',
      warmup: warmup === '1',
      planned: mode !== null && mode !== undefined,
      callEstimateUsd: plan ? Math.max(...Object.values(plan.questionCostUsd)) / Math.max(1, plan.profile.calls) : 0,
    };
    return this.kinds.set(batchId, kind);
  }

  /** The answer the collector saved after this step's memo was read (a wake-up that raced the save). */
  private async savedAnswer(
    context: Pick<NodeContext, 'runId' | 'stepId'>,
    key: string,
  ): Promise<BatchedModelResponse> {
    const saved = await this.options.redis.hget(this.options.keys.run(context.runId).memo, context.stepId);
    const value = saved ? (JSON.parse(saved) as Record<string, BatchedModelResponse>)[key] : undefined;
    if (!value)
      throw new AgentqError(
        'INTERNAL',
        `the provider batch answered call '${key}' of step ${context.stepId}, but its answer is not in the step's memo`,
        { retryable: true },
      );
    return value;
  }
}

/** One more call of the batch in `mode`, and of its run (the run's calls feed the graph's measured averages). */
function countCall(redis: RedisConnection, keys: Keys, batchId: string, runId: string, mode: 'live' | 'batch') {
  const batchKeys = keys.batch(batchId);
  return redis.multi().hincrby(batchKeys.meta, `calls_${mode}`, 1).hincrby(batchKeys.usage, `n:${runId}`, 1).exec();
}
