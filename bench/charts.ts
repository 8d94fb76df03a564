/**
 * `npm run bench:charts`: draws the SVG charts of docs/benchmarks.md and docs/evaluation.md from
 * benchmark results, and writes them to a folder.
 *
 *   npm run bench:charts                                   bench/results/latest.json → docs/figures
 *   npm run bench:charts -- --from a.json,b.json --eval squad.json,hotpot.json --out docs/figures
 *   npm run bench:charts -- --recorded                     the figures the docs quote (docs/figures/recorded-results.json)
 *
 * `npm run bench -- --charts <dir>` draws the same charts at the end of a run.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResults, EvalResults } from './lib/bench-charts.js';
import { RECORDED_RESULTS, readRecordedResults, writeBenchCharts } from './lib/write-bench-charts.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
}

const out = resolve(root, option('--out') ?? 'docs/figures');
let bench: BenchResults[];
let evals: EvalResults[];
if (process.argv.includes('--recorded')) {
  ({ bench, evals } = readRecordedResults(resolve(root, RECORDED_RESULTS)));
} else {
  // With only --eval, no bench results are read (latest.json may not exist).
  const from = option('--from') ?? (option('--eval') ? undefined : 'bench/results/latest.json');
  const files = from === undefined ? [] : from.split(',');
  bench = files.map((file) => {
    const results = JSON.parse(readFileSync(resolve(root, file), 'utf8')) as BenchResults & { at?: string };
    return { measuredWith: results.measuredWith ?? `${file}, ${results.at ?? 'undated'}`, figures: results.figures };
  });
  evals = (option('--eval')?.split(',') ?? []).map(
    (file) => JSON.parse(readFileSync(resolve(root, file), 'utf8')) as EvalResults,
  );
}
for (const file of writeBenchCharts(out, bench, evals)) process.stderr.write(`wrote ${file}\n`);
