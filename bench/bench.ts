/**
 * `npm run bench`: every benchmark section, one after another, on one Redis (REDIS_URL, or a
 * private redis-server with AOF on). Progress goes to stderr; stdout gets a table (section, figure,
 * value, goal, met) and then one `name=value` line per figure. Writes bench/results/latest.json.
 *
 *   npm run bench                      everything, at full scale (docs/benchmarks.md's figures)
 *   npm run bench -- --quick           a short run that checks every section works (not to quote)
 *   npm run bench -- --only steps,langgraph
 *   npm run bench -- --charts docs/figures   also draw the charts of docs/benchmarks.md from this run
 *
 * A section that fails is reported (stderr and latest.json) and the others still run; the exit code is
 * then 1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { BenchFigures, BenchSection } from './lib/bench-section.js';
import { openBenchRedis } from './lib/bench-redis.js';
import { formatBenchTable, type BenchRow } from './lib/bench-table.js';
import { GOALS } from './lib/bench-goals.js';
import { writeBenchCharts } from './lib/write-bench-charts.js';
import { round } from './lib/stats.js';
import { batchFloorSection } from './sections/batch-floor.js';
import { capacitySection } from './sections/capacity.js';
import { ingestSection } from './sections/ingest.js';
import { ingestSecSection } from './sections/ingest-sec.js';
import { langgraphSection } from './sections/langgraph.js';
import { recoverySection } from './sections/recovery.js';
import { stepsSection } from './sections/steps.js';
import { streamingSection } from './sections/streaming.js';
import { cliColdStartSection } from './sections/cli-cold-start.js';
import { clusterSection } from './sections/cluster.js';
import { faultsSection } from './sections/faults.js';
import { providerBatchSection } from './sections/provider-batch.js';
import { recordingSection } from './sections/recording.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const SECTIONS: BenchSection[] = [
  stepsSection,
  langgraphSection,
  capacitySection,
  recordingSection,
  recoverySection,
  batchFloorSection,
  providerBatchSection,
  ingestSection(),
  ingestSecSection(),
  streamingSection,
  cliColdStartSection,
  clusterSection,
  faultsSection,
];
const log = (line: string) => process.stderr.write(`${line}\n`);

function selectedSections(argv: readonly string[]): BenchSection[] {
  const index = argv.indexOf('--only');
  if (index < 0) return SECTIONS;
  const names = (argv[index + 1] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !SECTIONS.some((section) => section.name === name));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(
      `BENCH_USAGE: --only takes section names separated by commas${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''} (sections: ${SECTIONS.map((section) => section.name).join(', ')})`,
    );
  }
  return SECTIONS.filter((section) => names.includes(section.name));
}

/** What the figures were measured on, for latest.json and docs/benchmarks.md. */
async function machine(redisUrl: string): Promise<Record<string, string | number>> {
  const redis = new Redis(redisUrl);
  try {
    const setting = async (name: string) => ((await redis.config('GET', name)) as string[])[1] ?? 'unknown';
    const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? 'unknown';
    return {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: round(totalmem() / 2 ** 30, 1),
      os: `${process.platform} ${release()}`,
      node: process.version,
      redis: `${version}, appendonly ${await setting('appendonly')}, appendfsync ${await setting('appendfsync')}`,
      // Other work on the machine skews every figure: say how busy it was.
      loadAverageAtStart: loadavg()
        .map((value) => value.toFixed(2))
        .join(' '),
    };
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<number> {
  const started = performance.now();
  const quick = process.argv.includes('--quick');
  const sections = selectedSections(process.argv);
  const redis = await openBenchRedis();
  log(
    `npm run bench${quick ? ' (quick)' : ''}: sections ${sections.map((section) => section.name).join(', ')}; Redis ${redis.description}`,
  );
  const rows: BenchRow[] = [];
  const results: { name: string; seconds: number; figures: BenchFigures; error?: string }[] = [];
  let host: Record<string, string | number>;
  try {
    host = await machine(redis.url);
    for (const section of sections) {
      log(`\n== ${section.name}`);
      const sectionStarted = performance.now();
      try {
        const figures = await section.run({ redisUrl: redis.url, quick, log });
        results.push({ name: section.name, seconds: round((performance.now() - sectionStarted) / 1000, 1), figures });
        for (const [figure, value] of Object.entries(figures)) rows.push({ section: section.name, figure, value });
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`section ${section.name} FAILED: ${message}`);
        results.push({
          name: section.name,
          seconds: round((performance.now() - sectionStarted) / 1000, 1),
          figures: {},
          error: message,
        });
      }
    }
  } finally {
    await redis.close();
  }
  const wallSeconds = round((performance.now() - started) / 1000, 1);
  host.loadAverageAtEnd = loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
  rows.push({ section: 'bench', figure: 'bench_wall_s', value: wallSeconds });
  process.stdout.write(`${formatBenchTable(rows)}\n\n`);
  for (const row of rows) process.stdout.write(`${row.figure}=${row.value}\n`);
  const failed = results.filter((result) => result.error);
  if (failed.length > 0) log(`\n${failed.length} section(s) failed: ${failed.map((result) => result.name).join(', ')}`);
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  const figures = Object.fromEntries(rows.map((row) => [row.figure, row.value]));
  writeFileSync(
    join(root, 'bench/results/latest.json'),
    `${JSON.stringify({ at: new Date().toISOString(), quick, wallSeconds, machine: host, goals: GOALS, sections: results, figures }, null, 2)}\n`,
  );
  const chartsIndex = process.argv.indexOf('--charts');
  if (chartsIndex >= 0) {
    const measuredWith = `npm run bench -- ${process.argv.slice(2).join(' ')}, ${new Date().toISOString().slice(0, 10)}, ${host.cpus} × ${host.cpuModel}, load ${host.loadAverageAtStart}`;
    const numeric = Object.fromEntries(Object.entries(figures).filter(([, value]) => typeof value === 'number'));
    for (const file of writeBenchCharts(resolve(process.argv[chartsIndex + 1] ?? 'docs/figures'), [
      { measuredWith, figures: numeric as Record<string, number> },
    ]))
      log(`chart: ${file}`);
  }
  return failed.length > 0 ? 1 : 0;
}

// Exit explicitly: a failed section may leave a connection or server open, which must not hang the run.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
