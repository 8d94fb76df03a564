import type { ChildProcess } from 'node:child_process';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';

/** How Node reports a crash from an unhandled rejection or exception on stderr. */
const CRASH = /unhandledRejection|UnhandledPromiseRejection|uncaughtException|triggerUncaughtException/;

/**
 * Real worker processes that must ride out Redis faults: every exit while the fleet runs is recorded
 * (a worker must never exit because Redis went away), and their stderr is kept so a test can look
 * for unhandled rejections and count what they logged.
 */
export interface WorkerFleet {
  /** Exits seen before `close()`, e.g. "worker 1 exited (code 1, signal null)". */
  readonly exits: string[];
  /** Stderr lines that report an unhandled rejection or uncaught exception. */
  crashLines(): string[];
  /** Every stderr line so far. */
  lines(): string[];
  /** How often each log message (pino `msg`, or the raw line) appeared on stderr: what the workers went through. */
  messageCounts(): Record<string, number>;
  close(): Promise<void>;
}

export async function startWorkerFleet(
  count: number,
  env: Record<string, string>,
  script = 'test/chaos/chain-worker.ts',
): Promise<WorkerFleet> {
  const exits: string[] = [];
  const stderr: string[] = [];
  let closing = false;
  const workers: ChildProcess[] = [];
  for (let index = 0; index < count; index += 1) {
    const worker = await spawnWorker(script, env, { onStderr: (text) => stderr.push(text) });
    worker.on('exit', (code, signal) => {
      if (!closing) exits.push(`worker ${index} exited (code ${code}, signal ${signal})`);
    });
    workers.push(worker);
  }
  const lines = () =>
    stderr
      .join('')
      .split('\n')
      .filter((line) => line.trim() !== '');
  return {
    exits,
    lines,
    crashLines: () => lines().filter((line) => CRASH.test(line)),
    messageCounts() {
      const counts: Record<string, number> = {};
      for (const line of lines()) {
        const key = messageOf(line);
        counts[key] = (counts[key] ?? 0) + 1;
      }
      return counts;
    },
    async close() {
      closing = true;
      await Promise.all(workers.map((worker) => killHard(worker)));
    },
  };
}

/** A log line without what differs per job or connection, so equal events count together. */
function messageOf(line: string): string {
  let text: string;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; err?: unknown };
    text = `${String(entry.msg)}${typeof entry.err === 'string' ? `: ${entry.err}` : ''}`;
  } catch {
    text = line;
  }
  return text
    .replace(/\bjob \S+?(\.? |$)/g, 'job <id>$1')
    .replace(/127\.0\.0\.1:\d+/g, '<redis>')
    .slice(0, 120);
}
