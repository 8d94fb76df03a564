import { StepAbort } from '../../shared/contracts/abort.js';
import type { StateOf } from '../../shared/graph/channels.js';
import type { CompiledNode, Graph, NodeResult } from '../../shared/graph/graph.js';
import type { NodeContext } from '../../shared/graph/node-context.js';
import type { StepObservation, StepObserver } from '../../shared/graph/step-observer.js';
import { observeStep } from './observe-step.js';
import { StepAbortHandle } from './step-abort.js';

/** One attempt of one node, free of Redis and BullMQ: what the step engine and the in-process runner share. */
export interface NodeRun {
  node: CompiledNode;
  state: StateOf<Graph['channels']>;
  /** The run's deadline (epoch ms), or null without one. */
  deadlineAt: number | null;
  /** The node's context for this attempt, built around the attempt's abort. */
  context: (abort: StepAbortHandle) => NodeContext;
  /** Registers the attempt's abort (cancel, shutdown) while it runs; returns its release. @default none */
  track?: (abort: StepAbortHandle) => () => void;
  /** Told `onNodeStart` now, and `onNodeEnd` here only when the node fails (a success is told after its commit). */
  observers?: readonly StepObserver[];
  /** The observation to tell them; none: nobody watches nodes. */
  observation?: StepObservation;
}

/** Runs the node, racing it against its abort so an abort is prompt even if the node ignores its signal. */
export async function runNode(run: NodeRun): Promise<NodeResult<Graph['channels']> | void> {
  const { node, deadlineAt, observers, observation } = run;
  const abort = new StepAbortHandle();
  const release = run.track?.(abort);
  const timers: NodeJS.Timeout[] = [];
  if (node.timeoutMs !== undefined) {
    timers.push(
      setTimeout(
        () => abort.abort(new StepAbort('timeout', `node '${node.name}' exceeded its timeout of ${node.timeoutMs} ms`)),
        node.timeoutMs,
      ),
    );
  }
  if (deadlineAt !== null) {
    timers.push(
      setTimeout(
        () =>
          abort.abort(new StepAbort('deadline', `the run passed its deadline (${new Date(deadlineAt).toISOString()})`)),
        Math.max(0, deadlineAt - Date.now()),
      ),
    );
  }
  try {
    const context = run.context(abort);
    if (observation) observeStep(observers, 'onNodeStart', observation);
    const running = Promise.resolve().then(() => node.run(run.state, context));
    running.catch(() => undefined); // an abandoned node's late failure must not become an unhandled rejection
    try {
      return await abort.race(running);
    } catch (error) {
      if (observation)
        observeStep(observers, 'onNodeEnd', { ...observation, endedAt: performance.now(), outcome: 'error' });
      throw error;
    }
  } finally {
    for (const timer of timers) clearTimeout(timer);
    release?.();
  }
}
