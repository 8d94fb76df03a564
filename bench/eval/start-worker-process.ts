import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** SIGTERM (graceful: steps in hand finish), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * `agentq worker` as a user runs it (`bin/agentq.ts worker` through tsx), configured by `env`; resolves
 * once it logs that it started. Its error-level log lines are passed to `log`; the rest is dropped.
 */
export function startWorkerProcess(
  root: string,
  env: Record<string, string>,
  log: (line: string) => void,
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/agentq.ts', 'worker'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // A worker must not outlive this script, however it ends (a test's timeout SIGTERMs it).
  process.once('exit', () => child.kill('SIGKILL'));
  exitOnSignals();
  const stop = (graceMs = 10_000) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let buffer = '';
    let started = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running behind a caller that gave up on it
      reject(new Error('the worker did not start within 60 s'));
    }, 60_000);
    child.once('exit', (code) => {
      if (!started) reject(new Error(`the worker exited with ${code} before it started`));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (!started && line.includes('agentq worker started')) {
          started = true;
          clearTimeout(timer);
          resolve({ child, stop });
        }
        if (/"level":(50|60)/.test(line)) log(`worker: ${line}`);
      }
    });
  });
}

let signalsHandled = false;

/** SIGTERM/SIGINT end this process through process.exit, so its 'exit' handlers stop the workers. */
function exitOnSignals(): void {
  if (signalsHandled) return;
  signalsHandled = true;
  process.once('SIGTERM', () => process.exit(143));
  process.once('SIGINT', () => process.exit(130));
}

/**
 * CPU seconds (user + system) a process has used, from /proc (Linux; undefined elsewhere): all its
 * threads, and its main thread alone (the event loop: steps, searches, SQLite).
 */
export function cpuSecondsOf(pid: number | undefined): { all: number; main: number } | undefined {
  if (pid === undefined) return undefined;
  // Fields after the command name (which may hold spaces, so split after its closing parenthesis): utime and stime are the 12th and 13th.
  const seconds = (file: string) => {
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  try {
    return { all: seconds(`/proc/${pid}/stat`), main: seconds(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return undefined;
  }
}
