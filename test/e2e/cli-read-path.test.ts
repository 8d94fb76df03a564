import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeEntry, repoRoot } from '../helpers/node-entry.js';
import { cliEnv } from '../helpers/run-cli.js';
import { testConfig } from '../helpers/test-env.js';

/** Module hooks (node:module register) that append every module URL the process loads to `data.file`. */
const RECORD_LOADS = `data:text/javascript,${encodeURIComponent(
  "import { appendFileSync } from 'node:fs'; let file; export function initialize(data) { file = data.file; } " +
    'export async function load(url, context, next) { appendFileSync(file, `${url}\\n`); return next(url, context); }',
)}`;

/** Runs `agentq <args>` (the built CLI) and returns its exit code and the packages it loaded. */
function packagesLoadedBy(
  args: string[],
  env: Record<string, string>,
  file: string,
): Promise<{ code: number | null; stderr: string; packages: Set<string> }> {
  // CommonJS modules required through createRequire (the SQLite store's addon) do not pass the ESM hooks on
  // Node 20: the require cache, which holds them all, is written out as the process exits.
  const register = `data:text/javascript,${encodeURIComponent(
    `import { register, createRequire } from 'node:module'; import { appendFileSync } from 'node:fs'; ` +
      `register(${JSON.stringify(RECORD_LOADS)}, { data: { file: ${JSON.stringify(file)} } }); ` +
      `process.on('exit', () => appendFileSync(${JSON.stringify(file)}, Object.keys(createRequire(process.cwd() + '/').cache).join('\\n') + '\\n'));`,
  )}`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', register, nodeEntry('bin/agentq.ts'), ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => {
      const urls = readFileSync(file, 'utf8').split('\n');
      const packages = new Set(
        urls
          // BullMQ's Lua sources (a module of text each, which agentq's own scripts embed) are not its library.
          .map((url) =>
            /\/node_modules\/bullmq\/dist\/\w+\/scripts\//.test(url)
              ? 'bullmq (Lua sources)'
              : /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1],
          )
          .filter((name): name is string => name !== undefined),
      );
      resolve({ code, stderr, packages });
    });
  });
}

/**
 * The read commands and `search` must not load what only writing needs. A
 * static import of BullMQ (or of the Qdrant client for the embedded store) slipping back in fails here,
 * without timing anything.
 */
describe('the CLI read path loads only what it needs', () => {
  const work = mkdtempSync(join(tmpdir(), 'agentq-cli-read-path-'));
  const config = testConfig({ AGENTQ_DATA_DIR: join(work, 'data') });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('status reads its record without ioredis, BullMQ or zod; runs reads Redis without BullMQ or zod', async () => {
    const status = await packagesLoadedBy(
      ['status', 'run_missing_read_path', '--json'],
      cliEnv(config),
      join(work, 'status.txt'),
    );
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('NOT_FOUND: run run_missing_read_path not found');
    // A bare RESP connection (RunRecordReader): loading ioredis cost more than the rest of the command.
    for (const heavy of ['ioredis', 'bullmq', 'zod']) expect(status.packages).not.toContain(heavy);
    expect(status.packages).toContain('commander');

    const runs = await packagesLoadedBy(['runs', '--json'], cliEnv(config), join(work, 'runs.txt'));
    expect(runs.code).toBe(0);
    expect(runs.packages).toContain('ioredis');
    expect(runs.packages).not.toContain('bullmq');
    expect(runs.packages).not.toContain('zod');
  });

  it('search on the embedded store loads neither Redis, BullMQ, the Qdrant client nor zod', async () => {
    const search = await packagesLoadedBy(
      ['search', 'vacation days', '--json'],
      cliEnv(config),
      join(work, 'search.txt'),
    );
    expect(search.code).toBe(0);
    expect(search.packages).toContain('better-sqlite3');
    // zod neither: a collection without vectors needs only the search settings (shared/config/search-config.ts).
    for (const heavy of ['bullmq', 'ioredis', '@qdrant/js-client-rest', 'zod'])
      expect(search.packages).not.toContain(heavy);
  });
});
