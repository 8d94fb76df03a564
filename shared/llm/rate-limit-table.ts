import type { ProviderLimits } from '../limits/provider-rate-limiter.js';

/** Provider limits by model id; `*` applies to every model without its own entry. */
export type RateLimitTable = Readonly<Record<string, ProviderLimits>>;

/**
 * Parses `AGENTQ_RATE_LIMITS`: `<model>:<requests/min>:<tokens/min>,…`, e.g.
 * `gpt-4o-mini:500:200000,*:60:0` (0 = unlimited). The two limits are the last two `:` fields, so model
 * ids that contain `:` (Ollama's `llama3.2:3b`) work. Returns the table, or the problems found.
 */
export function parseRateLimits(text: string): { table: RateLimitTable; problems: string[] } {
  const table: Record<string, ProviderLimits> = {};
  const problems: string[] = [];
  for (const entry of text.split(',').map((item) => item.trim()).filter(Boolean)) {
    const parts = entry.split(':');
    const tokens = parts.pop()?.trim() ?? '';
    const requests = parts.pop()?.trim() ?? '';
    const model = parts.join(':').trim();
    const wellFormed = model !== '' && /^\d+$/.test(requests) && /^\d+$/.test(tokens);
    if (!wellFormed) {
      problems.push(`entry '${entry}' must be <model>:<requests per minute>:<tokens per minute> with whole numbers (0 = unlimited), e.g. gpt-4o-mini:500:200000 or *:60:0`);
      continue;
    }
    table[model] = { requestsPerMinute: Number(requests), tokensPerMinute: Number(tokens) };
  }
  return { table, problems };
}

/**
 * The limits of a model: its exact id, else its id without a date suffix, else `*`; undefined when
 * none applies or when both limits are 0 (unlimited), so callers skip the limiter entirely.
 */
export function limitsFor(table: RateLimitTable, modelId: string): ProviderLimits | undefined {
  const limits = table[modelId] ?? table[modelId.replace(/-\d{4}-\d{2}-\d{2}$|-\d{4}$/, '')] ?? table['*'];
  if (!limits || (limits.requestsPerMinute <= 0 && limits.tokensPerMinute <= 0)) return undefined;
  return limits;
}
