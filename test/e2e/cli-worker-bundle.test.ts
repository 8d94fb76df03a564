import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { nodeEntry, repoRoot } from '../helpers/node-entry.js';
import { cliEnv } from '../helpers/run-cli.js';
import { testConfig } from '../helpers/test-env.js';
import { waitForRuns } from '../helpers/wait-for-runs.js';

/** Module hooks (node:module register) that append every module URL the process loads to `data.file`. */
const RECORD_LOADS = `data:text/javascript,${encodeURIComponent(
  "import { appendFileSync } from 'node:fs'; let file; export function initialize(data) { file = data.file; } " +
    'export async function load(url, context, next) { appendFileSync(file, `${url}\\n`); return next(url, context); }',
)}`;

/** Resolves once the worker's log (stderr) says it started; rejects after 30 s with what it said. */
async function waitForStarted(stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!stderr().includes('agentq worker started')) {
    if (Date.now() > deadline)
      throw new Error(`agentq worker never said it started; its stderr:\n${stderr().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `agentq worker` loads its modules from the bundle `npm run build` makes (scripts/bundle-worker.ts):
 * a handful of files instead of the ~700 modules of agentq and its packages, each of which Node resolved,
 * read and compiled on its own. Counted, not timed: a worker that loads agentq's modules one by one
 * again (the bundle missing from the build, or no longer loaded) fails here, and the run it takes
 * shows the bundled code works (its Lua scripts and its liveness thread found beside their modules).
 */
describe('agentq worker loads the bundled worker', () => {
  const work = mkdtempSync(join(tmpdir(), 'agentq-worker-bundle-'));
  const config = testConfig({ AGENTQ_DATA_DIR: join(work, 'data') });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('takes a run from the bundle, loading a few of agentq’s files and none of BullMQ’s, ioredis’ or zod’s', async () => {
    const loads = join(work, 'loads.txt');
    const register = `data:text/javascript,${encodeURIComponent(`import { register } from 'node:module'; register(${JSON.stringify(RECORD_LOADS)}, { data: { file: ${JSON.stringify(loads)} } });`)}`;
    const client = new AgentClient({ config });
    const child = spawn(process.execPath, ['--import', register, nodeEntry('bin/agentq.ts'), 'worker'], {
      cwd: repoRoot,
      env: { ...process.env, ...cliEnv(config), AGENTQ_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const { id } = await client.enqueue({ graph: 'chain', input: { steps: 2 } }, { queueUnserved: true });
      const [record] = await waitForRuns(client, [id], { timeoutMs: 60_000 });
      expect(record?.status, stderr.slice(-2000)).toBe('completed');
      // The worker takes jobs before its liveness thread is up (its main thread beats meanwhile): the start
      // is over, the thread's module loaded, once it says so.
      await waitForStarted(() => stderr);
    } finally {
      child.kill('SIGTERM');
      await exited;
      await client.close();
    }
    const urls = readFileSync(loads, 'utf8').split('\n').filter(Boolean);
    const dist = `file://${join(repoRoot, 'dist')}/`;
    const agentqFiles = urls.filter((url) => url.startsWith(dist)).map((url) => url.slice(dist.length));
    expect(agentqFiles).toContain('worker/worker-entry.bundle.js');
    // The liveness thread's module too (the load hooks see its loads).
    expect(agentqFiles).toContain('worker/runtime/liveness-beat.bundle.js');
    // The CLI's own modules (commander's program, its commands' registration) and the bundle's chunks:
    // without the bundle this is some 400 files.
    expect(agentqFiles.filter((file) => !file.startsWith('worker/worker-entry.')).length).toBeLessThan(40);
    const packages = new Set(urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]));
    for (const bundled of ['bullmq', 'ioredis', 'zod', 'openai']) expect(packages).not.toContain(bundled);
  });
});
