import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { TokenUsage } from '../../../shared/ports/language-model.js';
import { costOf, type PriceTable } from '../../../shared/llm/price-table.js';
import { redisFaultOf, retryWhileRedisFaulty } from '../../../shared/redis/redis-fault.js';

/** A fresh model call's hold on its tenant's budgets: settle it with the real usage, or release it. */
interface TenantBudgetHold {
  /**
   * Counts the call's real tokens and cost once; a failure is logged (usage undercounted, never doubled).
   * `costUsd`: the call's cost in the mode it was answered in (flex), else priced live.
   */
  settle(usage: TokenUsage, responseModel: string | undefined, costUsd?: number): Promise<void>;
  release(): Promise<void>;
}

/** How long a count Redis refused (full, unreachable) is tried again in the background. */
const SETTLE_RETRY_MS = 10 * 60_000;

const NO_HOLD: TenantBudgetHold = { settle: async () => undefined, release: async () => undefined };

interface ReserveTenantBudgetRequest {
  /** The memo key of the call within its step: with the run and step id it names the call (idempotent count). */
  key: string;
  modelId: string;
  prices: PriceTable;
  /** Tokens the call may use (estimated prompt + max_tokens). */
  tokens: () => Promise<number>;
}

/**
 * Reserves a model call's estimate against its tenant's budgets (services.tenantBudget) before the call:
 * throws TENANT_BUDGET_EXCEEDED (not retryable) when it does not fit, so the run fails before the model
 * is asked. The spend is counted while the response's memo is written: a crash before the count lands
 * leaves that call's spend uncounted (and a re-delivery that calls the model again is not counted twice:
 * same call id) — the one bound on the count is that single step. Without a budget service this is a no-op.
 */
export async function reserveTenantBudget(
  context: Pick<NodeContext, 'services' | 'tenant' | 'runId' | 'stepId' | 'graph' | 'logger'>,
  { key, modelId, prices, tokens }: ReserveTenantBudgetRequest,
): Promise<TenantBudgetHold> {
  const budget = context.services.tenantBudget;
  if (!budget) return NO_HOLD;
  const callId = `${context.runId}/${context.stepId}/${key}`;
  // Estimated only when the tenant has limits to hold it against.
  const reservation = await budget.reserve(context.tenant, {
    callId,
    estimate: async () => {
      const estimate = await tokens();
      // The estimate's cost prices every token at the output rate: the dearer side, so the hold is an upper bound.
      return { tokens: estimate, costUsd: costOf(prices, { inputTokens: 0, outputTokens: estimate }, modelId) };
    },
  });
  return {
    settle: async (usage, responseModel, costUsd) => {
      const count = () =>
        budget.settle(context.tenant, reservation, {
          callId,
          tokens: usage.inputTokens + usage.outputTokens,
          costUsd: costUsd ?? costOf(prices, usage, responseModel, modelId),
          graph: context.graph ?? 'unknown',
          model: responseModel ?? modelId,
        });
      try {
        await count();
      } catch (error) {
        if (redisFaultOf(error)) {
          // The call was paid; count it once Redis takes writes again (idempotent per call id).
          void retryWhileRedisFaulty(count, {
            untilMs: SETTLE_RETRY_MS,
            onGiveUp: (failure) =>
              context.logger.warn(
                { err: String(failure), tenant: context.tenant },
                'could not count a model call against its tenant budget before giving up',
              ),
          });
          return;
        }
        context.logger.warn(
          { err: (error as Error).message, tenant: context.tenant },
          'could not count a model call against its tenant budget',
        );
      }
    },
    release: async () => {
      try {
        await budget.release(reservation);
      } catch (error) {
        context.logger.warn(
          { err: (error as Error).message },
          'could not release a tenant budget reservation (it expires on its own)',
        );
      }
    },
  };
}
