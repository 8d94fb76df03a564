/** What an observer learns about one node execution. */
export interface StepObservation {
  runId: string;
  graph: string;
  node: string;
  superstep: number;
  task: number;
  attempt: number;
  /** `performance.now()` when the node started and (in `onNodeEnd`) ended. */
  startedAt: number;
  endedAt?: number;
  /** In `onNodeEnd`: how the node ended. */
  outcome?: 'ok' | 'error';
}

/**
 * Watches steps without touching the nodes (metrics, benchmarks, custom events). Called in the worker
 * process that runs the step; must be quick and must not throw (errors are ignored).
 */
export interface StepObserver {
  onNodeStart?(observation: StepObservation): void;
  onNodeEnd?(observation: StepObservation): void;
  /** A run this worker moved to completed, failed or cancelled. */
  onRunFinished?(runId: string, status: 'completed' | 'failed' | 'cancelled'): void;
}
