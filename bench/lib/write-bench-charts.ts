import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderBenchCharts, type BenchResults, type EvalResults } from './bench-charts.js';

/**
 * The figures the docs quote, with the command, machine and date that measured each group. The lead
 * re-runs the benchmarks on a quiet machine and replaces it; `npm run bench:charts -- --recorded`
 * redraws docs/figures from it, and a test fails while the committed charts differ from what it draws.
 */
export const RECORDED_RESULTS = 'docs/figures/recorded-results.json';

export interface RecordedResults {
  about: string;
  bench: BenchResults[];
  evaluation: EvalResults[];
}

export function readRecordedResults(file: string): { bench: BenchResults[]; evals: EvalResults[] } {
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as RecordedResults;
  return { bench: recorded.bench, evals: recorded.evaluation };
}

/** Draws every chart the results allow into `dir`; returns the files written. */
export function writeBenchCharts(
  dir: string,
  bench: readonly BenchResults[],
  evals: readonly EvalResults[] = [],
): string[] {
  mkdirSync(dir, { recursive: true });
  return renderBenchCharts(bench, evals).map(({ file, svg }) => {
    writeFileSync(join(dir, file), svg);
    return join(dir, file);
  });
}
