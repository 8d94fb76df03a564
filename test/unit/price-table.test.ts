import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { costOf, parsePriceTable } from '../../shared/llm/price-table.js';

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
