import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { costOf, parsePriceTable, usageCostOf } from '../../shared/llm/price-table.js';

describe('price table (AGENTQ_PRICES)', () => {
  it('parses model:input:output entries, model ids with colons included', () => {
    expect(parsePriceTable('gpt-4o-mini:0.15:0.6, llama3.2:3b:0:0 ,gpt-4o:2.5:10')).toEqual({
      table: {
        'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
        'llama3.2:3b': { inputPerMillion: 0, outputPerMillion: 0 },
        'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
      },
      problems: [],
    });
    expect(parsePriceTable('').table).toEqual({});
  });

  it('reports malformed entries, and the config refuses them', () => {
    expect(parsePriceTable('gpt-4o:cheap:1,x:1').problems).toHaveLength(2);
    expect(() => loadConfig({ AGENTQ_PRICES: 'gpt-4o:cheap:1' })).toThrow(
      /AGENTQ_PRICES: entry 'gpt-4o:cheap:1' must be <model>:<input USD per 1M tokens>/,
    );
    expect(loadConfig({ AGENTQ_PRICES: 'gpt-4o-mini:0.15:0.6' }).prices).toEqual({
      'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
    });
  });

  it('prices a response by its model, a dated model by its base id, an unknown model at 0', () => {
    const { table } = parsePriceTable('gpt-4o-mini:0.15:0.6');
    const usage = { inputTokens: 1_000_000, outputTokens: 500_000 };
    expect(costOf(table, usage, 'gpt-4o-mini')).toBeCloseTo(0.45, 12);
    expect(costOf(table, usage, 'gpt-4o-mini-2024-07-18')).toBeCloseTo(0.45, 12);
    expect(costOf(table, usage, 'unknown-model', 'gpt-4o-mini')).toBeCloseTo(0.45, 12);
    expect(costOf(table, usage, 'llama3.2')).toBe(0);
  });
});

describe('cached input and the modes’ prices', () => {
  it('reads an optional cached-input price, keeping model ids with colons', () => {
    expect(parsePriceTable('gpt-4o-mini:0.15:0.6:0.075,llama3.2:3b:0:0,qwen:7b:1:2:0.5').table).toEqual({
      'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6, cachedInputPerMillion: 0.075 },
      'llama3.2:3b': { inputPerMillion: 0, outputPerMillion: 0 },
      'qwen:7b': { inputPerMillion: 1, outputPerMillion: 2, cachedInputPerMillion: 0.5 },
    });
    // A third number dearer than the input price is no cache discount: the entry is a model id ending in a number.
    expect(parsePriceTable('model:1:1:2').table).toEqual({ 'model:1': { inputPerMillion: 1, outputPerMillion: 2 } });
    expect(loadConfig({ AGENTQ_FLEX_PRICES: 'gpt-4o-mini:0.07:0.3:0.01' }).flexPrices).toEqual({
      'gpt-4o-mini': { inputPerMillion: 0.07, outputPerMillion: 0.3, cachedInputPerMillion: 0.01 },
    });
  });

  it('prices cached input tokens at the cached rate, and at the input rate when none was set', () => {
    const { table } = parsePriceTable('cached:2:8:0.5,plain:2:8');
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 600_000, outputTokens: 100_000 };
    // 400k × 2 + 600k × 0.5 + 100k × 8 per million
    expect(costOf(table, usage, 'cached')).toBeCloseTo(0.8 + 0.3 + 0.8, 12);
    expect(costOf(table, usage, 'plain')).toBeCloseTo(2 + 0.8, 12);
  });

  it('prices a usage for its mode, with the uncached cost beside it', () => {
    const tables = {
      prices: parsePriceTable('m:2:8:0.5').table,
      flexPrices: parsePriceTable('own:1:1').table,
      batchPrices: {},
    };
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 1_000_000, outputTokens: 0 };
    expect(usageCostOf(tables, 'live', usage, 'm')).toEqual({ costUsd: 0.5, uncachedCostUsd: 2 });
    expect(usageCostOf(tables, 'flex', usage, 'm')).toEqual({ costUsd: 0.25, uncachedCostUsd: 1 });
    expect(usageCostOf(tables, 'batch', usage, 'm')).toEqual({ costUsd: 0.25, uncachedCostUsd: 1 });
    expect(usageCostOf(tables, 'flex', { inputTokens: 1_000_000, outputTokens: 0 }, 'own')).toEqual({
      costUsd: 1,
      uncachedCostUsd: 1,
    });
  });
});
