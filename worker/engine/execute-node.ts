import type { StepUsage } from '../../shared/contracts/run-record.js';
import { StepAbort } from '../../shared/contracts/abort.js';
import { graphIdOf, type StepJobData } from '../../shared/contracts/job-schema.js';
import type { StateOf } from '../../shared/graph/channels.js';
import type { CompiledNode, Graph, NodeResult } from '../../shared/graph/graph.js';
import type { StepObservation } from '../../shared/graph/step-observer.js';
import type { StepMeta } from '../../shared/store/redis-run-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { createNodeContext } from './create-node-context.js';
import { observeStep, watchingNodes } from './observe-step.js';
import { StepAbortHandle } from './step-abort.js';
import type { StepProcessorOptions } from './step-processor-options.js';

/** Runs the node, racing it against its abort so an abort is prompt even if the node ignores its signal. */
export async function executeNode(
  options: StepProcessorOptions,
  node: CompiledNode,
  state: StateOf<Graph['channels']>,
  meta: StepMeta,
  data: StepJobData,
  attempt: number,
  logger: Logger,
  usage: StepUsage,
  memos: Record<string, unknown>,
  { historyLength }: { historyLength?: number } = {},
): Promise<{ result: NodeResult<Graph['channels']> | void; ended?: StepObservation }> {
  const abort = new StepAbortHandle();
  const release = options.activeSteps.add(data.runId, abort);
  const timers: NodeJS.Timeout[] = [];
  if (node.timeoutMs !== undefined) {
    timers.push(
      setTimeout(
        () => abort.abort(new StepAbort('timeout', `node '${node.name}' exceeded its timeout of ${node.timeoutMs} ms`)),
        node.timeoutMs,
      ),
    );
  }
  if (meta.deadlineAt !== null) {
    timers.push(
      setTimeout(
        () =>
          abort.abort(
            new StepAbort('deadline', `the run passed its deadline (${new Date(meta.deadlineAt!).toISOString()})`),
          ),
        Math.max(0, meta.deadlineAt - Date.now()),
      ),
    );
  }
  const { store, services, claims, paidClaimMs } = options;
  const claimMs = node.timeoutMs ?? paidClaimMs ?? 600_000;
  const context = createNodeContext({
    store,
    services,
    meta,
    data,
    node: node.name,
    attempt,
    abort,
    logger,
    usage,
    memos,
    ...(historyLength === undefined ? {} : { historyLength }),
    ...(claims ? { claims, claimMs } : {}),
  });
  try {
    // Observations are made only while an observer watches nodes (none by default: a step's garbage).
    const observation: StepObservation | undefined = watchingNodes(options.observers)
      ? {
          runId: data.runId,
          graph: graphIdOf(meta), // name@version on every step (a start job's data names the graph only)
          node: node.name,
          superstep: data.superstep,
          task: data.task,
          attempt,
          startedAt: performance.now(),
        }
      : undefined;
    if (observation) observeStep(options.observers, 'onNodeStart', observation);
    const running = Promise.resolve().then(() => node.run(state, context));
    running.catch(() => undefined); // an abandoned node's late failure must not become an unhandled rejection
    try {
      const result = await abort.race(running);
      return {
        result,
        ...(observation ? { ended: { ...observation, endedAt: performance.now(), outcome: 'ok' as const } } : {}),
      };
    } catch (error) {
      if (observation)
        observeStep(options.observers, 'onNodeEnd', { ...observation, endedAt: performance.now(), outcome: 'error' });
      throw error;
    }
  } finally {
    for (const timer of timers) clearTimeout(timer);
    release();
  }
}
