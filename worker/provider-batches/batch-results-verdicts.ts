import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { runScript } from '../../shared/redis/create-redis.js';
import type { ErrorRecord } from '../../shared/contracts/errors.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { estimateMessageTokens, estimatePromptTokens } from '../../shared/llm/estimate-tokens.js';
import { batchCostOf, costOf, type PriceTable } from '../../shared/llm/price-table.js';
import type { ProviderBatchResult } from '../../shared/ports/provider-batches.js';
import type { Keys } from '../../shared/store/keys.js';
import type { FlushRecord, FlushUsage } from '../../shared/operations/batches/provider-batch-flush-record.js';
import { parseCallId } from './provider-batch-call.js';
import type { BatchedModelResponse } from './provider-batch-router.js';
import { APPLY_ANSWER } from './provider-batch-scripts.js';
import { inGroups } from './in-groups.js';

/** Answers saved at once (each its own script; a provider batch may hold 50 000). */
const SAVES_AT_ONCE = 32;

/** What becomes of one call of a flush (the `calls` state MARK_CALLS writes). */
type CallVerdict = { s: 'applied' } | { s: 'pending' } | { s: 'live' } | { s: 'error'; e: ErrorRecord };

export interface VerdictContext {
  redis: RedisConnection;
  keys: Keys;
  prices: PriceTable;
  batchPrices: PriceTable;
  /** AGENTQ_PROVIDER_BATCH_FALLBACK: what becomes of requests an expired provider batch did not answer. */
  fallback: 'none' | 'live';
  /** The agentq batch was cancelled (its runs are being cancelled too). */
  batchCancelled: boolean;
  /** Counts an answer's spend against its tenant's budgets (idempotent per call). @default not counted */
  countSpend?: (customId: string, answer: BatchedModelResponse, costUsd: number) => Promise<void>;
}

interface Verdicts {
  verdicts: Record<string, CallVerdict>;
  usage: FlushUsage;
  /** Custom ids whose answers were saved in their steps' memos now. */
  saved: string[];
}

/**
 * A finished provider batch's results, call by call: each answer saved in its step's memo (where a live
 * call's answer is saved, so it is never paid for again); each error line an error the step fails with (retried by the
 * node's policy); each request without a line settled by the batch's status — resubmitted (or called live)
 * after an expiry, an error after a failure, a cancel or a results file that lacked it. Lines naming no
 * request of this flush are `problems`, never applied.
 */
export async function batchResultsVerdicts(
  context: VerdictContext,
  flush: FlushRecord,
  results: readonly ProviderBatchResult[],
  problems: string[],
  bodyOf: (customId: string) => Promise<string | undefined>,
): Promise<Verdicts> {
  const batchId = flush.batchId ?? flush.id;
  const ours = new Set(flush.ids);
  const verdicts: Record<string, CallVerdict> = {};
  const usage: FlushUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0, liveCostUsd: 0, answered: 0, errors: 0 };
  const saved: string[] = [];
  const answered: { customId: string; response: NonNullable<ProviderBatchResult['response']> }[] = [];
  for (const result of results) {
    if (!ours.has(result.customId)) {
      problems.push(`a line for custom_id '${result.customId.slice(0, 120)}', which is not a request of this batch`);
      continue;
    }
    if (verdicts[result.customId]) continue;
    if (result.response) {
      verdicts[result.customId] = { s: 'applied' };
      answered.push({ customId: result.customId, response: result.response });
      continue;
    }
    const error = result.error ?? { message: 'no answer and no error' };
    if (error.code === 'batch_expired') continue; // settled below, with the requests the batch left unanswered
    if (error.code === 'batch_cancelled') continue;
    usage.errors += 1;
    const retryable = error.status === undefined || error.status >= 500 || [408, 409, 429].includes(error.status);
    verdicts[result.customId] = {
      s: 'error',
      e: {
        code: 'PROVIDER_ERROR',
        message: `provider batch ${batchId} answered this model call with an error${error.status === undefined ? '' : ` (HTTP ${error.status}${error.code ? ` ${error.code}` : ''})`}: ${error.message}`,
        retryable,
        details: {
          providerBatch: batchId,
          ...(error.status === undefined ? {} : { status: error.status }),
          ...(error.code ? { code: error.code } : {}),
        },
      },
    };
  }
  // Saved a few at a time: one round trip each, independent of each other.
  await inGroups(answered, SAVES_AT_ONCE, async ({ customId, response }) => {
    const answer = await answerOf(response, batchId, () => bodyOf(customId));
    const call = parseCallId(customId)!;
    const runKeys = context.keys.run(call.runId);
    await runScript(
      context.redis,
      APPLY_ANSWER,
      [runKeys.memo, runKeys.meta, runKeys.writes],
      [call.stepId, call.key, JSON.stringify(answer), call.superstep, call.task],
    );
    saved.push(customId);
    usage.answered += 1;
    usage.inputTokens += answer.usage.inputTokens;
    usage.outputTokens += answer.usage.outputTokens;
    const costUsd = batchCostOf(context.batchPrices, context.prices, answer.usage, answer.model, flush.model);
    usage.costUsd += costUsd;
    usage.liveCostUsd += costOf(context.prices, answer.usage, answer.model, flush.model);
    await context.countSpend?.(customId, answer, costUsd);
  });
  for (const customId of flush.ids) verdicts[customId] ??= unanswered(context, flush, batchId, problems);
  return { verdicts, usage, saved };
}

/** A request of the flush that got neither an answer nor an error line. */
function unanswered(context: VerdictContext, flush: FlushRecord, batchId: string, problems: string[]): CallVerdict {
  const error = (message: string, retryable = true, code: ErrorRecord['code'] = 'PROVIDER_ERROR'): CallVerdict => ({
    s: 'error',
    e: { code, message, retryable, details: { providerBatch: batchId } },
  });
  if (context.batchCancelled)
    return error('the batch was cancelled before this model call was answered', false, 'CANCELLED');
  switch (flush.status) {
    case 'expired':
      // Not done within the completion window: again in the next provider batch, or live if asked.
      return context.fallback === 'live' ? { s: 'live' } : { s: 'pending' };
    case 'cancelled':
      return error(`provider batch ${batchId} was cancelled at the provider before it answered this model call`);
    case 'failed':
      return error(`provider batch ${batchId} failed: ${(flush.errors ?? ['no reason given']).join('; ')}`);
    case 'completed': {
      const unreadable =
        problems.length > 0
          ? ` (its results had ${problems.length} unusable line(s): ${problems.slice(0, 3).join('; ')})`
          : '';
      return error(`provider batch ${batchId} completed without an answer for this model call${unreadable}`);
    }
    default:
      // Its results could not be downloaded, or the provider would not show it, for as long as allowed: the
      // provider never said it ended without an answer, and it may have answered (and charged) this call, so
      // the step fails rather than send it again in another provider batch.
      return error(
        `provider batch ${batchId}: ${(flush.errors ?? ['its results could not be read']).join('; ')}; this model call is not sent again (the provider may have answered it); its results can still be fetched from the provider`,
        false,
        'PROVIDER_BATCH_RESULTS_UNAVAILABLE',
      );
  }
}

/** The answer as the step's memo holds it (usage estimated from the request when the provider sent none). */
async function answerOf(
  response: NonNullable<ProviderBatchResult['response']>,
  providerBatch: string,
  body: () => Promise<string | undefined>,
): Promise<BatchedModelResponse> {
  if (response.usage) return { ...response, usage: response.usage, usageEstimated: false, providerBatch };
  const line = await body();
  const messages = line ? ((JSON.parse(line) as { body?: { messages?: Message[] } }).body?.messages ?? []) : [];
  return {
    ...response,
    usage: {
      inputTokens: await estimatePromptTokens(messages),
      outputTokens: await estimateMessageTokens(response.message),
    },
    usageEstimated: true,
    providerBatch,
  };
}
