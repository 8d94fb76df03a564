import type { TokenUsage } from '../ports/language-model.js';

/** USD per one million tokens of a model. */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
}

/** Prices by model id. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Parses `AGENTQ_PRICES`: `<model>:<input USD per 1M tokens>:<output USD per 1M tokens>,…`, e.g.
 * `gpt-4o-mini:0.15:0.6,gpt-4o:2.5:10`. The two prices are the last two `:` fields, so model ids that
 * contain `:` (Ollama's `llama3.2:3b`) work. Returns the table, or the problems found.
 */
export function parsePriceTable(text: string): { table: PriceTable; problems: string[] } {
  const table: Record<string, ModelPrice> = {};
  const problems: string[] = [];
  for (const entry of text.split(',').map((item) => item.trim()).filter(Boolean)) {
    const parts = entry.split(':');
    const output = Number(parts.pop());
    const input = Number(parts.pop());
    const model = parts.join(':').trim();
    if (model === '' || !Number.isFinite(input) || !Number.isFinite(output) || input < 0 || output < 0) {
      problems.push(`entry '${entry}' must be <model>:<input USD per 1M tokens>:<output USD per 1M tokens>, e.g. gpt-4o-mini:0.15:0.6`);
      continue;
    }
    table[model] = { inputPerMillion: input, outputPerMillion: output };
  }
  return { table, problems };
}

/**
 * The price of a model: by its exact id, else by the id without a date suffix (the provider answers
 * `gpt-4o-mini-2024-07-18` to a request for `gpt-4o-mini`). Undefined when the table lacks it.
 */
export function priceOf(table: PriceTable, ...modelIds: (string | undefined)[]): ModelPrice | undefined {
  for (const id of modelIds) {
    if (!id) continue;
    const exact = table[id];
    if (exact) return exact;
    const undated = table[id.replace(/-\d{4}-\d{2}-\d{2}$|-\d{4}$/, '')];
    if (undated) return undated;
  }
  return undefined;
}

/** Estimated cost in USD of a response; 0 for a model the table lacks. */
export function costOf(table: PriceTable, usage: TokenUsage, ...modelIds: (string | undefined)[]): number {
  const price = priceOf(table, ...modelIds);
  if (!price) return 0;
  return (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1_000_000;
}
