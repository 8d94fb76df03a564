/** What an observer learns about one node execution. */
export interface StepObservation {
  runId: string;
  /** The graph's `name@version`. */
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
  /** In `onNodeEnd` after `ok`: what the node returned (its state update, and `messages` it appended). */
  output?: unknown;
  /**
   * In `onNodeEnd` after `ok`: the run's state once the step's commit is done (read-only). For a task of
   * a parallel superstep, its own write applied (the siblings' writes are merged when the last finishes).
   */
  state?: Readonly<Record<string, unknown>>;
}

/**
 * Watches steps without touching the nodes (metrics, benchmarks, custom events). Called in the worker
 * process that runs the step; must be quick and must not throw (errors are ignored).
 */
export interface StepObserver {
  onNodeStart?(observation: StepObservation): void;
  /** After an `ok` node, once its step is committed (so `state` is what the commit wrote); after an `error` at once. */
  onNodeEnd?(observation: StepObservation): void;
  /** A run this worker moved to completed, failed or cancelled. */
  onRunFinished?(runId: string, status: 'completed' | 'failed' | 'cancelled'): void;
}
