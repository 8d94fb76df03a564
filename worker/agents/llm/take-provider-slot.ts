import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { agentSettingsOf } from '../agent-services.js';
import { limitsFor } from '../../../shared/llm/rate-limit-table.js';

/** A granted request under the provider limits; `settle` reconciles its estimate with real usage. */
interface ProviderSlot {
  /** Never throws: a failed reconciliation only leaves the estimate in the window. */
  settle(actualTokens: number): Promise<void>;
}

interface TakeProviderSlotRequest {
  /** `gen_ai.provider.name` of the model, part of the limit's key. */
  provider: string;
  /** The model requested; its entry in AGENTQ_RATE_LIMITS (or `*`) applies. */
  model: string;
  /** Tokens the request may use (estimated prompt tokens + max_tokens); only counted when a limit applies. */
  tokens: number | (() => Promise<number>);
}

const NO_SLOT: ProviderSlot = { settle: async () => undefined };

/**
 * Takes one request slot under the provider limits shared by every worker (AGENTQ_RATE_LIMITS). A full
 * window throws a retryable `RATE_LIMITED` with `retryAfterMs`, which parks the step (delayed, no
 * attempt spent) until the window has room; a request larger than the whole token limit can never
 * pass and fails the run instead. Without a limiter or limits for the model this is a no-op.
 */
export async function takeProviderSlot(
  context: Pick<NodeContext, 'services' | 'node' | 'logger'>,
  request: TakeProviderSlotRequest,
): Promise<ProviderSlot> {
  const { provider, model } = request;
  const limiter = context.services.rateLimiter;
  const limits = limiter ? limitsFor(agentSettingsOf(context).rateLimits, model) : undefined;
  if (!limiter || !limits) return NO_SLOT;
  const tokens = typeof request.tokens === 'number' ? request.tokens : await request.tokens();
  const result = await limiter.acquire(provider, model, limits, tokens);
  if (!result.granted) {
    const details = {
      provider,
      model,
      requestsPerMinute: limits.requestsPerMinute,
      tokensPerMinute: limits.tokensPerMinute,
      tokens,
    };
    if (result.impossible) {
      throw new AgentqError(
        'RATE_LIMITED',
        `node '${context.node}' needs about ${tokens} tokens for one request to '${model}', more than the ${limits.tokensPerMinute} tokens/min AGENTQ_RATE_LIMITS allows; raise that limit or lower AGENTQ_LLM_MAX_TOKENS`,
        { details },
      );
    }
    // A little jitter, so steps parked on the same full window do not all wake in the same millisecond.
    const retryAfterMs = Math.ceil(result.retryAfterMs + Math.random() * Math.min(250, 50 + result.retryAfterMs * 0.1));
    throw new AgentqError(
      'RATE_LIMITED',
      `the provider limits for '${model}' (${limits.requestsPerMinute || 'unlimited'} requests/min, ${limits.tokensPerMinute || 'unlimited'} tokens/min, AGENTQ_RATE_LIMITS) are used up; the step waits ${retryAfterMs} ms`,
      { retryable: true, retryAfterMs, details },
    );
  }
  const ticket = result.ticket;
  return {
    settle: async (actualTokens) => {
      try {
        await limiter.settle(provider, model, ticket, actualTokens);
      } catch (error) {
        context.logger.warn(
          { err: (error as Error).message, model },
          'could not reconcile the provider-limit estimate with the real usage',
        );
      }
    },
  };
}
