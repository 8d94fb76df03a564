import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderBenchCharts } from '../../bench/lib/bench-charts.js';
import { RECORDED_RESULTS, readRecordedResults } from '../../bench/lib/write-bench-charts.js';
import { repoRoot } from '../helpers/doc-pages.js';

/** The bars of an SVG chart: series and value of every `<rect data-series data-value>`. */
function bars(svg: string): { series: string; value: number }[] {
  return [...svg.matchAll(/<rect data-series="([^"]*)" data-value="([^"]*)"/g)].map(([, series, value]) => ({
    series: series!,
    value: Number(value),
  }));
}

describe('the benchmark charts', () => {
  it('draw each figure of the results as a bar of that value, and leave out what was not measured', () => {
    const charts = renderBenchCharts([
      {
        measuredWith: 'npm run bench -- --only steps',
        figures: {
          engine_steps_per_s_r1: 1000,
          engine_steps_per_s_r10: 3000,
          engine_steps_per_s_r100: 8000,
          bullmq_chain_steps_per_s_r100: 9000,
        },
      },
    ]);
    expect(charts.map((chart) => chart.file)).toEqual(['steps-per-second.svg']);
    const svg = charts[0]!.svg;
    expect(bars(svg).map((bar) => bar.value)).toEqual([1000, 3000, 8000, 9000]);
    // No inline figure in these results: no bar and no legend entry for it.
    expect(svg).not.toContain('inline');
    expect(svg).toContain('npm run bench -- --only steps');
  });

  it('draw an eval run per set, one series per retrieval mode, as percentages', () => {
    const [chart] = renderBenchCharts(
      [],
      [
        { set: 'tiny', retrieval: 'lexical', figures: { 'recall@5': 80, cited_doc_precision: 70 } },
        { set: 'tiny', retrieval: 'hybrid', figures: { 'recall@5': 90, cited_doc_precision: 75 } },
      ],
    );
    expect(chart!.file).toBe('eval-tiny.svg');
    expect(bars(chart!.svg)).toEqual([
      { series: 'lexical', value: 80 },
      { series: 'hybrid', value: 90 },
      { series: 'lexical', value: 70 },
      { series: 'hybrid', value: 75 },
    ]);
  });

  it('committed in docs/figures are what the recorded results draw (`npm run bench:charts -- --recorded`)', () => {
    const { bench, evals } = readRecordedResults(join(repoRoot, RECORDED_RESULTS));
    const charts = renderBenchCharts(bench, evals);
    expect(charts.length).toBeGreaterThanOrEqual(9);
    const committed = readdirSync(join(repoRoot, 'docs/figures')).filter((file) => file.endsWith('.svg'));
    expect(committed.sort()).toEqual(charts.map((chart) => chart.file).sort());
    for (const chart of charts) {
      expect(readFileSync(join(repoRoot, 'docs/figures', chart.file), 'utf8'), chart.file).toBe(chart.svg);
    }
  });
});
