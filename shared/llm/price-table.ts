import { modelEntry, parseModelTable } from './model-table.js';
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
  return parseModelTable(
    text,
    2,
    ([input, output]) => {
      const [inputPerMillion, outputPerMillion] = [Number(input), Number(output)];
      return Number.isFinite(inputPerMillion) &&
        Number.isFinite(outputPerMillion) &&
        inputPerMillion >= 0 &&
        outputPerMillion >= 0 &&
        input !== '' &&
        output !== ''
        ? { inputPerMillion, outputPerMillion }
        : undefined;
    },
    '<model>:<input USD per 1M tokens>:<output USD per 1M tokens>, e.g. gpt-4o-mini:0.15:0.6',
  );
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

/** Estimated cost in USD of a response; 0 for a model the table lacks. */
export function costOf(table: PriceTable, usage: TokenUsage, ...modelIds: (string | undefined)[]): number {
  const price = priceOf(table, ...modelIds);
  if (!price) return 0;
  return (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1_000_000;
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
  const batch = priceOf(batchTable, ...modelIds);
  if (batch) return costOf({ model: batch }, usage, 'model');
  return costOf(liveTable, usage, ...modelIds) / 2;
}
