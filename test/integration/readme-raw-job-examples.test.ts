import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The README's fenced block of `language` whose first line starts with `firstLine`. */
function snippet(language: string, firstLine: string): string {
  const block = [...readme.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))]
    .map((match) => match[1]!)
    .find((body) => body.startsWith(firstLine));
  if (!block) throw new Error(`README.md has no \`\`\`${language} block starting with ${firstLine}`);
  return block;
}

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
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
}

const pythonHasBullmq = spawnSync('python3', ['-c', 'import bullmq'], { stdio: 'ignore' }).status === 0;

/**
 * The README's plain-BullMQ examples (job schema v1), run as written against a real worker. They use
 * BullMQ's default prefix `bull`, so the worker here does too (its run-store keys stay the test's own).
 */
describe("the README's raw-job examples", () => {
  let env: TestEnv;
  const scratch = mkdtempSync(join(root, '.readme-snippets-'));
  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_QUEUE_PREFIX: 'bull' } });
  });
  afterAll(async () => {
    await env.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the Node snippet needs only bullmq + ioredis, exits on its own, and its run completes', async () => {
    const node = snippet('js', '// Node, plain BullMQ');
    expect(node).toMatch(/npm install bullmq ioredis/);
    const file = join(scratch, 'plain-bullmq.mjs');
    writeFileSync(file, node);
    const result = await run(process.execPath, [file], { REDIS_URL: env.config.redisUrl! });
    expect(result.code, result.stderr).toBe(0);
    expect(result.ms).toBeLessThan(20_000);
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
