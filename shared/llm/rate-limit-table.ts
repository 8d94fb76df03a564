import { modelEntry, parseModelTable } from './model-table.js';

/** What a provider allows one model, as the rate limiter enforces it across the fleet. */
export interface ProviderLimits {
  /** Requests per minute; 0 = unlimited. */
  requestsPerMinute: number;
  /** Input + output tokens per minute; 0 = unlimited. */
  tokensPerMinute: number;
}

/** Provider limits by model id; `*` applies to every model without its own entry. */
type RateLimitTable = Readonly<Record<string, ProviderLimits>>;

/**
 * Parses `AGENTQ_RATE_LIMITS`: `<model>:<requests/min>:<tokens/min>,…`, e.g.
 * `gpt-4o-mini:500:200000,*:60:0` (0 = unlimited). The two limits are the last two `:` fields, so model
 * ids that contain `:` (Ollama's `llama3.2:3b`) work. Returns the table, or the problems found.
 */
export function parseRateLimits(text: string): { table: RateLimitTable; problems: string[] } {
  return parseModelTable(
    text,
    2,
    ([requests = '', tokens = '']) =>
      /^\d+$/.test(requests) && /^\d+$/.test(tokens)
        ? { requestsPerMinute: Number(requests), tokensPerMinute: Number(tokens) }
        : undefined,
    '<model>:<requests per minute>:<tokens per minute> with whole numbers (0 = unlimited), e.g. gpt-4o-mini:500:200000 or *:60:0',
  );
}

/**
 * The limits of a model: its exact id, else its id without a date suffix, else `*`; undefined when
 * none applies or when both limits are 0 (unlimited), so callers skip the limiter entirely.
 */
export function limitsFor(table: RateLimitTable, modelId: string): ProviderLimits | undefined {
  const limits = modelEntry(table, modelId) ?? table['*'];
  if (!limits || (limits.requestsPerMinute <= 0 && limits.tokensPerMinute <= 0)) return undefined;
  return limits;
}
