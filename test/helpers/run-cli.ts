import { spawn } from 'node:child_process';
import type { Config } from '../../shared/config/config.js';
import { describeBound, loadScaledMs, readinessBoundMs } from './load-scale.js';
import { nodeEntry, repoRoot } from './node-entry.js';
import { OutputTail } from './process-readiness.js';

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
    // A producer's fail-fast limit on a Redis command: a loaded machine answers later than a quiet one.
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: String(loadScaledMs(750)),
    ...extra,
  };
}

/**
 * Runs `agentq <args>` (the built CLI, dist/bin/agentq.js) as its own process and collects what it printed;
 * `stdin` is piped in. A CLI command's readiness is its exit: past a load-scaled bound (60 s on a quiet
 * machine) it is killed and the promise rejects, naming the command and its last stderr lines.
 */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  const baseMs = 60_000;
  const boundMs = readinessBoundMs(baseMs);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [nodeEntry('bin/agentq.ts'), ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
    });
    if (stdin !== undefined) child.stdin.end(stdin);
    let stdout = '';
    let stderr = '';
    const stderrTail = new OutputTail();
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      stderrTail.add(chunk.toString());
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `agentq ${args.join(' ')} (pid ${child.pid}) had not exited after ${boundMs} ms = ${describeBound(baseMs)}. ` +
            `Its last stderr lines:\n${stderrTail.lines()}`,
        ),
      );
    }, boundMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
