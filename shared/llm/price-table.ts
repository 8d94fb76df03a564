import { modelEntry, parseModelTable } from './model-table.js';
import type { TokenUsage } from '../ports/language-model.js';

/** USD per one million tokens of a model. */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
  /** Input tokens read from the provider's prompt cache, when the operator set it. @default the input price */
  cachedInputPerMillion?: number;
}

/** Prices by model id. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** How a model call was answered, which decides its price table. */
export type PricingMode = 'live' | 'flex' | 'batch';

/** The price tables of the modes: live (AGENTQ_PRICES), flex (AGENTQ_FLEX_PRICES), batch (AGENTQ_BATCH_PRICES). */
export interface ModePrices {
  prices: PriceTable;
  /** @default half of `prices` (OpenAI's flex discount) */
  flexPrices?: PriceTable;
  /** @default half of `prices` (OpenAI's Batch API discount) */
  batchPrices?: PriceTable;
}

/** A usage's cost, and what it would have cost with every input token at the full input rate. */
export interface UsageCost {
  costUsd: number;
  uncachedCostUsd: number;
}

/** What the settings' reference page says an entry of a price table is. */
export const PRICE_ENTRIES =
  '`<model>:<input USD per 1M tokens>:<output USD per 1M tokens>[:<cached input USD per 1M tokens>]` entries separated by commas';

const USAGE =
  '<model>:<input USD per 1M tokens>:<output USD per 1M tokens>[:<cached input USD per 1M tokens>], e.g. gpt-4o-mini:0.15:0.6:0.075';

/**
 * Parses `AGENTQ_PRICES` (and the flex and batch tables): `<model>:<input>:<output>[:<cached input>],…` in
 * USD per 1M tokens, e.g. `gpt-4o-mini:0.15:0.6:0.075,gpt-4o:2.5:10`. The prices are the last `:` fields, so
 * model ids that contain `:` (Ollama's `llama3.2:3b`) work: an entry is read with a cached price when its last
 * three fields are prices and the third is at most the first (a cache discounts, never surcharges), else with
 * two. Returns the table, or the problems found.
 */
export function parsePriceTable(text: string): { table: PriceTable; problems: string[] } {
  const table: Record<string, ModelPrice> = {};
  const problems: string[] = [];
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const withCached = parseModelTable(entry, 3, readPrices, USAGE);
    const parsed = withCached.problems.length === 0 ? withCached : parseModelTable(entry, 2, readPrices, USAGE);
    Object.assign(table, parsed.table);
    problems.push(...parsed.problems);
  }
  return { table, problems };
}

function readPrices([input, output, cached]: string[]): ModelPrice | undefined {
  const prices = [input, output, ...(cached === undefined ? [] : [cached])].map((value) => value!.trim());
  const numbers = prices.map(Number);
  if (prices.some((value) => value === '') || numbers.some((value) => !Number.isFinite(value) || value < 0))
    return undefined;
  const [inputPerMillion, outputPerMillion, cachedInputPerMillion] = numbers as [number, number, number?];
  if (cachedInputPerMillion === undefined) return { inputPerMillion, outputPerMillion };
  return cachedInputPerMillion > inputPerMillion
    ? undefined
    : { inputPerMillion, outputPerMillion, cachedInputPerMillion };
}

/**
 * The price of a model: by its exact id, else by the id without a date suffix (the provider answers
 * `gpt-4o-mini-2024-07-18` to a request for `gpt-4o-mini`). Undefined when the table lacks it.
 */
function priceOf(table: PriceTable, ...modelIds: (string | undefined)[]): ModelPrice | undefined {
  for (const id of modelIds) {
    if (!id) continue;
    const price = modelEntry(table, id);
    if (price) return price;
  }
  return undefined;
}

/**
 * Estimated cost in USD of a response; 0 for a model the table lacks. Cached input tokens are priced at the
 * model's cached rate: (input − cached) × input + cached × cached input + output × output.
 */
export function costOf(table: PriceTable, usage: TokenUsage, ...modelIds: (string | undefined)[]): number {
  const price = priceOf(table, ...modelIds);
  if (!price) return 0;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  return (
    ((usage.inputTokens - cached) * price.inputPerMillion +
      cached * (price.cachedInputPerMillion ?? price.inputPerMillion) +
      usage.outputTokens * price.outputPerMillion) /
    1_000_000
  );
}

/**
 * A usage's cost in the mode it was answered in, and its cost had no input token come from the prompt
 * cache. Flex and batch use their own table's entry for the model, else half its live price (OpenAI's
 * discount for both).
 */
export function usageCostOf(
  tables: ModePrices,
  mode: PricingMode,
  usage: TokenUsage,
  ...modelIds: (string | undefined)[]
): UsageCost {
  const uncached = { ...usage, cachedInputTokens: 0 };
  const at = (priced: TokenUsage): number => {
    if (mode === 'live') return costOf(tables.prices, priced, ...modelIds);
    const own = priceOf((mode === 'flex' ? tables.flexPrices : tables.batchPrices) ?? {}, ...modelIds);
    return own ? costOf({ model: own }, priced, 'model') : costOf(tables.prices, priced, ...modelIds) / 2;
  };
  return { costUsd: at(usage), uncachedCostUsd: at(uncached) };
}

/**
 * Estimated cost in USD of a response answered through the provider's Batch API: the model's batch price
 * (AGENTQ_BATCH_PRICES), else half its live price (OpenAI's Batch API discount); 0 for a model in neither.
 */
export function batchCostOf(
  batchTable: PriceTable,
  liveTable: PriceTable,
  usage: TokenUsage,
  ...modelIds: (string | undefined)[]
): number {
  return usageCostOf({ prices: liveTable, batchPrices: batchTable }, 'batch', usage, ...modelIds).costUsd;
}
