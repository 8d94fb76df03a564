/**
 * A `bench/workers/capacity-worker.ts` process seen from the benchmark: fork it, hear about finished
 * runs, ask for its stats, SIGKILL it, stop it. Used by the capacity and recovery sections and the soak.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = join(root, 'bench/workers/capacity-worker.ts');

export type WorkerRequest = { type: 'stats'; gc?: boolean } | { type: 'stop' };

export interface WorkerStats {
  /** `process.memoryUsage().heapUsed`, after a full GC when asked with `gc: true`. */
  heapUsed: number;
  rss: number;
  /** Event-loop delay p99 and max since the previous stats request, ms. */
  eldP99Ms: number;
  eldMaxMs: number;
  /** The steps running in the process right now. */
  running: { runId: string; superstep: number }[];
}

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'finished'; runId: string; status: 'completed' | 'failed' | 'cancelled' }
  | ({ type: 'stats' } & WorkerStats);

export interface BenchWorker {
  readonly child: ChildProcess;
  /** Called in this process for every run the worker finished. */
  onFinished(listener: (runId: string, status: string) => void): void;
  stats(options?: { gc?: boolean }): Promise<WorkerStats>;
  /** SIGKILL; resolves when the process is gone. */
  kill(): Promise<void>;
  /** Graceful close (the worker lets active steps finish within its grace period). */
  stop(): Promise<void>;
}

/** Forks a worker with `env` over this process's environment; resolves once it takes jobs. */
export async function forkBenchWorker(env: Record<string, string>): Promise<BenchWorker> {
  const child = fork(SCRIPT, [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let finishedListener: (runId: string, status: string) => void = () => undefined;
  const statsWaiters: ((stats: WorkerStats) => void)[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`capacity-worker exited with ${code} before it was ready`));
    child.once('exit', onExit);
    child.on('message', (message: WorkerReply) => {
      if (message.type === 'ready') {
        child.off('exit', onExit);
        resolve();
      } else if (message.type === 'finished') finishedListener(message.runId, message.status);
      else if (message.type === 'stats') statsWaiters.shift()?.(message);
    });
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    onFinished: (listener) => void (finishedListener = listener),
    stats: ({ gc = false } = {}) =>
      new Promise<WorkerStats>((resolve, reject) => {
        if (!alive()) return reject(new Error('capacity-worker is not running'));
        statsWaiters.push(resolve);
        child.send({ type: 'stats', gc } satisfies WorkerRequest);
      }),
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (alive()) child.send({ type: 'stop' } satisfies WorkerRequest);
      await exited;
    },
  };
}
