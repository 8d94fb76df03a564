import type { ChildProcess } from 'node:child_process';
import { describeBound, readinessBoundMs } from './load-scale.js';

export interface ReadinessWait {
  /** The process, as a failure names it (`worker test/chaos/chain-worker.ts`, `agentq start`). */
  what: string;
  /** What it prints once ready. */
  signal: RegExp;
  /** Where it prints it. @default 'stdout' */
  on?: 'stdout' | 'stderr' | 'either';
  /** The bound on a quiet machine, scaled with the load (see load-scale.ts). @default 30 s */
  baseMs?: number;
}

/** The last lines a process wrote to a stream, kept for failure messages. */
export class OutputTail {
  private kept = '';
  constructor(private readonly keepChars = 4000) {}
  add(chunk: string): void {
    this.kept = (this.kept + chunk).slice(-this.keepChars);
  }
  text(): string {
    return this.kept;
  }
  lines(count = 15): string {
    const lines = this.kept.split('\n').filter((line) => line.trim() !== '');
    return lines.length === 0 ? '(nothing)' : lines.slice(-count).join('\n');
  }
}

/**
 * Resolves once `child` prints its readiness signal. Rejects (and SIGKILLs the child) when it exits first
 * or the load-scaled bound passes, saying what was awaited and the last lines of its stderr. The child's
 * stdout and stderr must be pipes.
 */
export function waitForReadiness(child: ChildProcess, wait: ReadinessWait): Promise<void> {
  const on = wait.on ?? 'stdout';
  const baseMs = wait.baseMs ?? 30_000;
  const boundMs = readinessBoundMs(baseMs);
  const stderr = new OutputTail();
  const watched = new OutputTail(64_000);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      cleanUp();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      const awaited = `${wait.signal} on ${on === 'either' ? 'stdout or stderr' : on}`;
      reject(
        new Error(
          `${wait.what} (pid ${child.pid}) ${why} after ${Date.now() - started} ms while the test waited for ${awaited}; ` +
            `bound ${boundMs} ms = ${describeBound(baseMs)}. Its last stderr lines:\n${stderr.lines()}`,
        ),
      );
    };
    const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const text = chunk.toString();
      if (stream === 'stderr') stderr.add(text);
      if (on !== 'either' && on !== stream) return;
      watched.add(text);
      if (wait.signal.test(watched.text())) {
        cleanUp();
        resolve();
      }
    };
    const onStdout = onData('stdout');
    const onStderr = onData('stderr');
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      fail(`exited (code ${code}, signal ${signal}) before it was ready`);
    const timer = setTimeout(() => fail('was not ready'), boundMs);
    const cleanUp = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onStdout);
      child.stderr?.off('data', onStderr);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', onStdout);
    child.stderr?.on('data', onStderr);
    child.once('exit', onExit);
  });
}
