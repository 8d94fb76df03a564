import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { StepAbort } from '../../shared/contracts/abort.js';
import { AgentqError, type ErrorRecord } from '../../shared/contracts/errors.js';
import type { NodeContext, PaidCall } from '../../shared/graph/node-context.js';
import { ParkSignal } from '../../shared/graph/park-signal.js';
import type { LanguageModelRequest, LanguageModelResponse, TokenUsage } from '../../shared/ports/language-model.js';
import type { ProviderBatches } from '../../shared/ports/provider-batches.js';
import type { Keys } from '../../shared/store/keys.js';
import { batchIdOfRun, callIdOf } from './provider-batch-call.js';
import { REGISTER_CALL } from './provider-batch-scripts.js';

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

/** Batches whose flag was read, by id (a batch's `providerBatch` never changes); bounded. */
const CACHE_LIMIT = 10_000;

/**
 * Decides, for one model call, whether it goes through the provider's Batch API (its run belongs to a
 * batch submitted with `providerBatch`), and if so hands its request to the collector and parks the
 * step (ParkSignal): the step holds no worker and no lock until the collector saves the answer in its
 * memo and wakes it. A woken step finds the answer with `context.memo` and never gets here; an error
 * answer is thrown here once (the step's retry policy decides), and a call the collector sends back
 * live (AGENTQ_PROVIDER_BATCH_FALLBACK=live) returns undefined: the caller calls live.
 */
export class ProviderBatchRouter {
  private readonly optedIn = new Map<string, boolean>();

  constructor(private readonly options: ProviderBatchRouterOptions) {}

  /** undefined: call live. Otherwise the saved answer, or it throws (a park, the provider's error, a cancel). */
  async send(
    context: Pick<NodeContext, 'runId' | 'stepId' | 'attempt'>,
    key: string,
    request: Omit<LanguageModelRequest, 'abortSignal'>,
    paid?: PaidCall,
  ): Promise<BatchedModelResponse | undefined> {
    const batchId = batchIdOfRun(context.runId);
    if (!batchId || !(await this.isOptedIn(batchId))) return undefined;
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

  private async isOptedIn(batchId: string): Promise<boolean> {
    const known = this.optedIn.get(batchId);
    if (known !== undefined) return known;
    const flag = await this.options.redis.hget(this.options.keys.batch(batchId).meta, 'providerBatch');
    if (this.optedIn.size >= CACHE_LIMIT) this.optedIn.clear();
    this.optedIn.set(batchId, flag === '1');
    return flag === '1';
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
