import type { AgentClient } from '../../producer/client/agent-client.js';
import { closedLoop } from './closed-loop.js';
import type { ForkedWorker } from './forked-worker.js';
import type { StepTiming } from './step-timings.js';

export interface EngineLoopOptions {
  graph: string;
  input: object;
  inFlight: number;
  total: number;
  /** @default 1000 */
  maxSteps?: number;
}

/**
 * A closed loop of agentq runs: `inFlight` runs at once, each finish (reported by `worker` over IPC)
 * enqueues the next, until `total` have finished. → elapsed ms and the run ids. A run that ends other
 * than completed fails the loop (BENCH_RUN_FAILED): a figure over failed runs would measure nothing.
 */
export async function engineLoop(
  worker: ForkedWorker,
  client: AgentClient,
  { graph, input, inFlight, total, maxSteps = 1000 }: EngineLoopOptions,
): Promise<{ elapsedMs: number; runIds: string[] }> {
  const runIds: string[] = [];
  const mine = new Set<string>();
  // A run may finish before its enqueue call returns here: remember finishes not yet claimed.
  const unclaimed = new Set<string>();
  const loop = closedLoop(inFlight, total, async () => {
    const run = await client.enqueue({ graph, input, options: { maxSteps } });
    runIds.push(run.id);
    mine.add(run.id);
    if (unclaimed.delete(run.id)) loop.finished();
  });
  const failed = new Promise<never>((_resolve, reject) => {
    worker.onFinished((runId, status) => {
      if (status !== undefined && status !== 'completed')
        reject(new Error(`BENCH_RUN_FAILED: ${graph} run ${runId} ended ${status}`));
      if (mine.delete(runId)) loop.finished();
      else unclaimed.add(runId);
    });
  });
  failed.catch(() => undefined); // only the race below reports it
  const elapsedMs = await Promise.race([loop.done, worker.failed, failed]);
  return { elapsedMs, runIds };
}

/** The node timings `bench/workers/engine-worker.ts` recorded (BENCH_RECORD_STEPS=true) for these runs. */
export async function stepTimingsOf(worker: ForkedWorker, runIds: readonly string[]): Promise<StepTiming[][]> {
  const reply = await worker.request<{ observations: Record<string, StepTiming[]> }>(
    { type: 'observations', runIds },
    'observations',
  );
  return Object.values(reply.observations);
}

/** Turns the worker's recording of node timings on or off (off: what it kept is dropped). */
export function recordStepTimings(worker: ForkedWorker, on: boolean): void {
  worker.child.send({ type: 'record', on });
}
