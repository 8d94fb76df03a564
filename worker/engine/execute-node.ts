import type { StepUsage } from '../../shared/contracts/run-record.js';
import { graphIdOf, type StepJobData } from '../../shared/contracts/job-schema.js';
import type { StateOf } from '../../shared/graph/channels.js';
import type { CompiledNode, Graph, NodeResult } from '../../shared/graph/graph.js';
import type { StepObservation } from '../../shared/graph/step-observer.js';
import type { StepMeta } from '../../shared/store/redis-run-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { createNodeContext, type NodeContextInput } from './create-node-context.js';
import { watchingNodes } from './observe-step.js';
import { runNode } from './run-node.js';
import type { StepProcessorOptions } from './step-processor-options.js';

/** One attempt of one step job: what its node runs with. */
export interface StepAttempt {
  node: CompiledNode;
  state: StateOf<Graph['channels']>;
  meta: StepMeta;
  data: StepJobData;
  /** 1 on the first attempt. */
  attempt: number;
  logger: Logger;
  /** Filled by the node's `recordUsage`; the step commits it. */
  usage: StepUsage;
  /** The step's memos saved by earlier attempts; `memo` adds to it. */
  memos: Record<string, unknown>;
  /** The run's history length when the step's begin knew it (a start job's admission). @default unknown */
  historyLength?: number;
  /** The run's whole history as JSON texts, when this worker knows it (StateCache.historyOf). @default unknown */
  history?: readonly string[];
}

/**
 * Runs a step job's node (run-node.ts) with the node context over the run store, its abort
 * registered with the worker's active steps (cancel, shutdown) and its paid calls claimed.
 */
export async function executeNode(
  options: StepProcessorOptions,
  { node, state, meta, data, attempt, logger, usage, memos, historyLength, history }: StepAttempt,
): Promise<{ result: NodeResult<Graph['channels']> | void; ended?: StepObservation }> {
  const { store, services, claims, paidClaimMs, observers, activeSteps, callbacks } = options;
  const claimMs = node.timeoutMs ?? paidClaimMs ?? 600_000;
  // Observations are made only while an observer watches nodes (none by default: a step's garbage).
  const observation: StepObservation | undefined = watchingNodes(observers)
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
  const result = await runNode({
    node,
    state,
    deadlineAt: meta.deadlineAt,
    track: (abort) => activeSteps.add(data.runId, abort),
    context: (abort) => {
      const input: NodeContextInput = {
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
      };
      // Set one by one: each conditional spread made a small object only to copy it.
      if (historyLength !== undefined) input.historyLength = historyLength;
      if (history !== undefined) input.history = history;
      if (claims) {
        input.claims = claims;
        input.claimMs = claimMs;
      }
      if (callbacks) input.callbacks = callbacks;
      return createNodeContext(input);
    },
    ...(observation ? { observers, observation } : {}),
  });
  return {
    result,
    ...(observation ? { ended: { ...observation, endedAt: performance.now(), outcome: 'ok' as const } } : {}),
  };
}
