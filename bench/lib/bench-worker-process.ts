/**
 * A `bench/workers/capacity-worker.ts` process seen from the benchmark: a forked worker (forked-worker.ts)
 * that also answers `stats`. Used by the capacity and recovery sections and the soak.
 */
import { forkWorker, type ForkedWorker } from './forked-worker.js';

export type WorkerRequest = { type: 'stats'; gc?: boolean } | { type: 'stop' };

export interface WorkerStats {
  /** `process.memoryUsage().heapUsed`, after a full GC when asked with `gc: true`. */
  heapUsed: number;
  rss: number;
  /** Event-loop delay p99 and max since the previous stats request, ms. */
  eldP99Ms: number;
  eldMaxMs: number;
  /** The longest garbage-collection pause and their sum since the previous stats request, ms. */
  gcMaxMs: number;
  gcTotalMs: number;
  /** The steps running in the process right now. */
  running: { runId: string; superstep: number }[];
}

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'finished'; runId: string; status: 'completed' | 'failed' | 'cancelled' }
  | ({ type: 'stats' } & WorkerStats);

export interface BenchWorker extends ForkedWorker {
  /** Heap, RSS, event-loop delay and running steps; `gc: true` collects first (the worker runs with --expose-gc). */
  stats(options?: { gc?: boolean }): Promise<WorkerStats>;
}

/** Forks a capacity worker with `env` over this process's environment; resolves once it takes jobs. */
export async function forkBenchWorker(env: Record<string, string>): Promise<BenchWorker> {
  const worker = await forkWorker('bench/workers/capacity-worker.ts', env, { execArgv: ['--expose-gc'] });
  return Object.assign(worker, {
    stats: ({ gc = false } = {}) => worker.request<WorkerStats>({ type: 'stats', gc } satisfies WorkerRequest, 'stats'),
  });
}
