import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchSection } from './bench-section.js';
import { openBenchRedis } from './bench-redis.js';
import { round } from './stats.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs one section as its own command (`npm run bench:steps`, `npm run bench:ingest`): on REDIS_URL or
 * a private redis-server, `--quick` from argv; prints `name=value` lines on stdout (progress on
 * stderr) and writes them to `bench/results/<resultsName>`, with `bench_wall_s`.
 */
export async function runStandalone(
  section: BenchSection,
  resultsName: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const started = performance.now();
  const quick = process.argv.includes('--quick');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const redis = await openBenchRedis();
  log(`bench ${section.name} on ${redis.description}${quick ? ' (quick)' : ''}`);
  let figures: Record<string, number>;
  try {
    figures = await section.run({ redisUrl: redis.url, quick, log });
  } finally {
    await redis.close();
  }
  figures.bench_wall_s = round((performance.now() - started) / 1000);
  for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name}=${value}\n`);
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(
    join(root, 'bench/results', resultsName),
    `${JSON.stringify({ at: new Date().toISOString(), quick, ...extra, figures }, null, 2)}\n`,
  );
}
