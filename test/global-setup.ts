import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPrivateRedis, type PrivateRedis } from '../shared/redis/private-redis-server.js';
import { FIGURES_FILE_VARIABLE } from './suite-reporter.js';

let redis: PrivateRedis | undefined;
let figuresDir: string | undefined;

/**
 * One private redis-server per lane, on a free loopback port; tests isolate by key/queue prefix. The
 * figures file is one for the whole run: the first lane's setup makes it and names it in the main
 * process's environment, where the suite reporter (test/suite-reporter.ts) reads it at the end.
 */
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
  if (!process.env[FIGURES_FILE_VARIABLE]) {
    figuresDir = mkdtempSync(join(tmpdir(), 'agentq-figures-'));
    process.env[FIGURES_FILE_VARIABLE] = join(figuresDir, 'figures.jsonl');
  }
  project.provide('figuresFile', process.env[FIGURES_FILE_VARIABLE]);
}

/** After the reporters: the figures have been printed by then. */
export async function teardown(): Promise<void> {
  await redis?.stop();
  if (!figuresDir) return;
  rmSync(figuresDir, { recursive: true, force: true });
  delete process.env[FIGURES_FILE_VARIABLE];
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    figuresFile: string;
  }
}
