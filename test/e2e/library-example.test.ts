import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { loadScaledMs } from '../helpers/load-scale.js';
import { testConfig } from '../helpers/test-env.js';
import { docSnippet } from '../helpers/doc-pages.js';
import { compileAgainstPackage } from '../helpers/import-probe.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The page that shows the example (its code block names this test). */
const page = 'docs/getting-started/first-agent.md';

describe("the docs' library example", () => {
  it(`is in ${page} verbatim`, () => {
    const example = readFileSync(`${root}/examples/library-usage.ts`, 'utf8').trim();
    expect(docSnippet(page, 'ts', '// A service that defines its own graph').trim()).toBe(example);
  });

  // Two cold tsx processes and a tsc run: generous on a busy machine.
  it("compiles against the package's exports and runs", { timeout: loadScaledMs(180_000) }, async () => {
    // `import … from 'agentq'` resolves through package.json "exports" to dist/ (npm test builds first).
    expect(
      existsSync(`${root}/dist/index.js`),
      'dist/index.js is missing: run `npm run build` (npm test does it)',
    ).toBe(true);
    const compile = compileAgainstPackage(join(root, 'examples/library-usage.ts'));
    expect(compile.status, compile.stdout + compile.stderr).toBe(0);
    const config = testConfig();
    // As beside `npm start`: a worker of the built-in graphs only, on the same Redis, that must leave
    // the example's runs to the example's own worker. Run twice: a second run is not the first one's replay.
    const npmStartWorker = await startWorker({ config, logger: createLogger('silent'), reconciler: false });
    try {
      for (let round = 0; round < 2; round += 1) {
        const result = await runExample({
          REDIS_URL: config.redisUrl!,
          AGENTQ_KEY_PREFIX: config.keyPrefix,
          AGENTQ_QUEUE_PREFIX: config.queuePrefix,
          AGENTQ_LOG_LEVEL: 'warn',
        });
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout)).toEqual({
          status: 'completed',
          output: { orderId: 'A-1001', decision: 'auto-approve', notes: ['looked up A-1001'] },
        });
      }
    } finally {
      await npmStartWorker.close();
    }
  });

  it('with no Redis, exits non-zero at once with a message naming the URL, instead of hanging', async () => {
    const started = Date.now();
    const result = await runExample({ REDIS_URL: 'redis://127.0.0.1:1', AGENTQ_LOG_LEVEL: 'warn' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    // The check itself gives up after 3 s; the rest is starting Node and tsx (slower on a busy machine).
    expect(Date.now() - started).toBeLessThan(loadScaledMs(45_000));
  });
});

/** Runs the example as the page tells a reader to (`npx tsx examples/library-usage.ts`): through tsx, not dist/. */
function runExample(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/library-usage.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
