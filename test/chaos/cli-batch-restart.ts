import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunReader } from '../../producer/client/run-reader.js';
import { loadConfig } from '../../shared/config/config.js';
import { nodeEntry, repoRoot } from '../helpers/node-entry.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { startRestartableRedis } from './redis-restartable.js';

export interface BatchRestartOptions {
  /** Questions in the batch (each takes echo-rag's slow 400 ms; two at a time). @default 16 */
  questions?: number;
  /** How long Redis is down. @default 5000 */
  outageMs?: number;
  /** The CLI is SIGKILLed if it has not exited this long after it started: the old code never exits. */
  killAfterMs: number;
  /** More arguments of `agentq batch` (e.g. `--outage-ms`). */
  cliArgs?: string[];
  /** Redis stays down: the CLI must give up rather than wait for it. */
  neverBack?: boolean;
}

export interface BatchRestartOutcome {
  /** The CLI's exit code; null when it was killed. */
  code: number | null;
  killed: boolean;
  /** From the CLI's start to its exit (or kill). */
  seconds: number;
  stdout: string;
  stderr: string;
  /** The answers file's lines, when the CLI wrote one. */
  answers: { id: string; status: string; answer: string | null }[] | null;
}

/**
 * `agentq batch` (the built CLI) answering echo-rag questions through a real worker process while its
 * private Redis (AOF on) is shut down for `outageMs` once two answers are in, then started again on
 * the same port and data. Shared by the chaos test and `bench/cli-batch-restart.ts` (the figure).
 */
export async function batchAcrossRedisRestart(options: BatchRestartOptions): Promise<BatchRestartOutcome> {
  const { questions = 16, outageMs = 5000, killAfterMs } = options;
  const redis = await startRestartableRedis();
  const dir = mkdtempSync(join(tmpdir(), 'agentq-batch-restart-'));
  const id = randomBytes(4).toString('hex');
  const env = {
    REDIS_URL: redis.url,
    AGENTQ_KEY_PREFIX: `t${id}`,
    AGENTQ_QUEUE_PREFIX: `q${id}`,
    AGENTQ_LOG_LEVEL: 'error',
    EMBED_PROVIDER: 'none',
  };
  const worker = await spawnWorker('test/chaos/echo-rag-worker.ts', env);
  try {
    const file = join(dir, 'questions.jsonl');
    const out = join(dir, 'answers.jsonl');
    writeFileSync(
      file,
      Array.from(
        { length: questions },
        (_, index) => `${JSON.stringify({ id: `q${index}`, question: `slow ${index}` })}\n`,
      ).join(''),
    );
    const started = Date.now();
    const cli = spawn(
      process.execPath,
      [
        nodeEntry('bin/agentq.ts'),
        'batch',
        file,
        '--graph',
        'echo-rag',
        '--concurrency',
        '2',
        '--out',
        out,
        '--poll-ms',
        '100',
        ...(options.cliArgs ?? []),
      ],
      { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    cli.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; killed: boolean }>((resolve) => {
      const timer = setTimeout(() => cli.kill('SIGKILL'), killAfterMs);
      cli.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, killed: signal === 'SIGKILL' });
      });
    });
    await answered(loadConfig(env), 2);
    await redis.shutdown();
    if (!options.neverBack) {
      await new Promise((resolve) => setTimeout(resolve, outageMs));
      await redis.start();
    }
    const { code, killed } = await exited;
    const seconds = (Date.now() - started) / 1000;
    const answers = existsSync(out)
      ? readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { id: string; status: string; answer: string | null })
      : null;
    return { code, killed, seconds, stdout, stderr, answers };
  } finally {
    await killHard(worker);
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Resolves once `count` echo-rag runs have completed: the batch is under way, and not near its end. */
async function answered(config: ReturnType<typeof loadConfig>, count: number): Promise<void> {
  const reader = new RunReader({ config });
  try {
    for (;;) {
      const { runs } = await reader.list({ graph: 'echo-rag', status: 'completed' });
      if (runs.length >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await reader.close();
  }
}
