import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPrivateRedis, type PrivateRedis } from '../shared/adapters/redis/private-redis-server.js';
import type { Figure } from './helpers/suite-figures.js';

let redis: PrivateRedis | undefined;
let figuresDir: string | undefined;

/** One private redis-server for the whole run, on a free loopback port; tests isolate by key/queue prefix. */
export async function setup(project: TestProject): Promise<void> {
  try {
    redis = await startPrivateRedis();
  } catch (error) {
    throw new Error(
      `tests need redis-server on PATH (Debian: apt-get install -y redis-server): ${(error as Error).message}`,
      { cause: error },
    );
  }
  project.provide('redisUrl', redis.url);
  figuresDir = mkdtempSync(join(tmpdir(), 'agentq-figures-'));
  project.provide('figuresFile', join(figuresDir, 'figures.jsonl'));
}

export async function teardown(): Promise<void> {
  await redis?.stop();
  if (!figuresDir) return;
  const file = join(figuresDir, 'figures.jsonl');
  if (existsSync(file)) printFigures(readFileSync(file, 'utf8'));
  rmSync(figuresDir, { recursive: true, force: true });
}

/** The fault and abuse suites' figures, one table, grouped by scenario in the order recorded. */
function printFigures(jsonLines: string): void {
  const figures = jsonLines
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Figure);
  if (figures.length === 0) return;
  const rows = figures.map((f) => [f.scenario, f.name, String(f.value), f.goal ?? '']);
  const header = ['scenario', 'figure', 'value', 'goal'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const ordered = [...rows].sort((a, b) => rows.findIndex((r) => r[0] === a[0]) - rows.findIndex((r) => r[0] === b[0]));
  console.log(
    ['', 'figures', line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...ordered.map(line), ''].join(
      '\n',
    ),
  );
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    figuresFile: string;
  }
}
