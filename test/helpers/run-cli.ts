import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../shared/config/config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment that points a CLI process at a test config's Redis, prefixes and data folder. */
export function cliEnv(config: Config, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: config.redisUrl!,
    AGENTQ_KEY_PREFIX: config.keyPrefix,
    AGENTQ_QUEUE_PREFIX: config.queuePrefix,
    AGENTQ_DATA_DIR: config.dataDir,
    ...extra,
  };
}

/** Runs `agentq <args>` (TypeScript through tsx) as its own process and collects what it printed; `stdin` is piped in. */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/agentq.ts', ...args], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    if (stdin !== undefined) child.stdin.end(stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
