import { spawn, type ChildProcess } from 'node:child_process';
import type { Config } from '../../shared/config/config.js';
import { nodeEntry, repoRoot } from './node-entry.js';
import { waitForReadiness } from './process-readiness.js';

/**
 * Starts a real worker process (`script`, a test's worker entry, run against dist/: node-entry.ts) and
 * resolves once it prints `ready`, however long a loaded machine takes (process-readiness.ts). Its stderr
 * goes to the test's stderr, or to `onStderr` when given (tests that read what a worker logged).
 */
export async function spawnWorker(
  script: string,
  env: Record<string, string>,
  { onStderr }: { onStderr?: (text: string) => void } = {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [nodeEntry(script)], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (chunk: Buffer) => (onStderr ? onStderr(chunk.toString()) : process.stderr.write(chunk)));
  // Drained after readiness too: a worker writing to a full pipe would block.
  child.stdout.resume();
  await waitForReadiness(child, { what: `worker ${script}`, signal: /ready/ });
  return child;
}

/** The environment of a worker process on `config`'s Redis and prefixes (logs at error, no embedder, as testConfig), plus `extra`. */
export function workerEnv(
  config: Pick<Config, 'redisUrl' | 'keyPrefix' | 'queuePrefix'>,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    REDIS_URL: config.redisUrl!,
    AGENTQ_KEY_PREFIX: config.keyPrefix,
    AGENTQ_QUEUE_PREFIX: config.queuePrefix,
    AGENTQ_LOG_LEVEL: 'error',
    ...(extra.EMBED_MODEL ? {} : { EMBED_PROVIDER: 'none' }),
    ...extra,
  };
}

export function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
