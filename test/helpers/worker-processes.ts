import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../shared/config/config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts a real worker process (TypeScript through tsx) and resolves once it is taking jobs. Its stderr
 * goes to the test's stderr, or to `onStderr` when given (tests that read what a worker logged).
 */
export function spawnWorker(
  script: string,
  env: Record<string, string>,
  { onStderr }: { onStderr?: (text: string) => void } = {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', onStderr ? 'pipe' : 'inherit'],
  });
  child.stderr?.on('data', (chunk: Buffer) => onStderr?.(chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${script} did not start within 30 s`)), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker ${script} exited with ${code} before it was ready`));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(child);
      }
    });
  });
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
