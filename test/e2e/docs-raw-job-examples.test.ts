import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJobSchema } from '../../shared/contracts/job-schema.js';
import { docSnippet } from '../helpers/doc-pages.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { loadScaledMs } from '../helpers/load-scale.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The guide that shows the examples, and the reference page that shows the schema's example. */
const guide = 'docs/guides/enqueue-from-another-service.md';
const reference = 'docs/reference/job-schema-v1.md';

/** The guide's fenced block of `language` whose first line starts with `firstLine`. */
const snippet = (language: string, firstLine: string) => docSnippet(guide, language, firstLine);

function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), loadScaledMs(30_000));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
}

const pythonHasBullmq = spawnSync('python3', ['-c', 'import bullmq'], { stdio: 'ignore' }).status === 0;

/**
 * The docs' plain-BullMQ examples (job schema v1), run as written against a real worker. They use
 * BullMQ's default prefix `bull`, so the worker here does too (its run-store keys stay the test's own).
 */
describe("the docs' raw-job examples", () => {
  let env: TestEnv;
  const scratch = mkdtempSync(join(root, '.readme-snippets-'));
  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_QUEUE_PREFIX: 'bull' } });
  });
  afterAll(async () => {
    await env.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the job data shown in the guide and the reference is valid job schema v1', () => {
    for (const page of [guide, reference]) {
      const data = JSON.parse(docSnippet(page, 'json', '{ "v": 1')) as unknown;
      expect(runJobSchema.safeParse(data).error, page).toBeUndefined();
    }
  });

  it('the Node snippet needs only bullmq + ioredis, exits on its own, and its run completes', async () => {
    const node = snippet('js', '// Node, plain BullMQ');
    expect(node).toMatch(/npm install bullmq ioredis/);
    const file = join(scratch, 'plain-bullmq.mjs');
    writeFileSync(file, node);
    const result = await run(process.execPath, [file], { REDIS_URL: env.config.redisUrl! });
    expect(result.code, result.stderr).toBe(0);
    expect(result.ms).toBeLessThan(loadScaledMs(20_000));
    expect((await waitForRawRun('order-42-check')).status).toBe('completed');
  });

  // Runs only where the Python client is installed; elsewhere vitest reports it as skipped, with this reason.
  it.skipIf(!pythonHasBullmq)(
    'the Python snippet runs and its run completes (SKIPPED unless `python3 -c "import bullmq"` works: pip install bullmq)',
    async () => {
      await env.client.purge('order-42-check').catch(() => undefined);
      const python = snippet('python', '# Python, the bullmq package');
      const file = join(scratch, 'plain_bullmq.py');
      writeFileSync(file, python);
      const result = await run('python3', [file], { REDIS_URL: env.config.redisUrl! });
      expect(result.code, result.stderr).toBe(0);
      expect((await waitForRawRun('order-42-check')).status).toBe('completed');
    },
  );

  /** A raw job's run exists once the intake has taken the job in (not when the snippet exits): wait for it, then for its end. */
  async function waitForRawRun(runId: string) {
    await eventually(
      async () => (await env.client.get(runId)) !== null,
      20_000,
      `the intake to take in raw job ${runId}`,
    );
    return env.client.wait(runId, { timeoutMs: 20_000 });
  }
});
