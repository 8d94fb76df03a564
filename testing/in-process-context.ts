import { sleep } from '../shared/contracts/abort.js';
import { AgentqError } from '../shared/contracts/errors.js';
import type { Message, StepUsage } from '../shared/contracts/run-record.js';
import type { MemoOptions, NodeContext, NodeEventType, PaidCall, Services } from '../shared/graph/node-context.js';
import type { Logger } from '../shared/telemetry/logger.js';
import { addStepUsage, resumeOrInterrupt } from '../worker/engine/create-node-context.js';
import type { StepAbortHandle } from '../worker/engine/step-abort.js';

/** An event a node emitted, with the fields the engine adds (node, superstep, task). */
export interface InProcessEvent {
  type: NodeEventType;
  data: Record<string, unknown>;
}

/** A piece of streamed model text a node sent to live subscribers. */
export interface InProcessToken {
  text: string;
  call: string;
  node: string;
  superstep: number;
  task: number;
  attempt: number;
}

/** What one attempt's context is made of: the run's records in memory instead of Redis. */
export interface InProcessContextInput {
  runId: string;
  tenant: string;
  graph: string;
  superstep: number;
  task: number;
  node: string;
  arg: unknown;
  attempt: number;
  abort: StepAbortHandle;
  logger: Logger;
  services: Services;
  /** The run's history before this superstep (what the engine has committed). */
  history: readonly Message[];
  /** The step's memos, kept across its attempts and a resume, as the run store keeps them. */
  memos: Record<string, unknown>;
  resume: { stepId: string; value: unknown } | null;
  usage: StepUsage;
  tokenBudgetRemaining: number | null;
  events: InProcessEvent[];
  tokens: InProcessToken[];
}

/** As a value goes through Redis: JSON in, JSON out (undefined becomes null, dates strings). */
export function throughJson<T>(value: T): T {
  return value === undefined ? (null as T) : (JSON.parse(JSON.stringify(value)) as T);
}

/** The node context of a step run in process (testing/run-in-process.ts). */
export function inProcessContext(input: InProcessContextInput): NodeContext {
  const { superstep, task, node, attempt, memos, history, usage, events, tokens } = input;
  const stepId = `s${superstep}.t${task}`;
  return {
    runId: input.runId,
    tenant: input.tenant,
    graph: input.graph,
    stepIndex: superstep,
    task,
    stepId,
    node,
    attempt,
    arg: input.arg,
    get abortSignal() {
      return input.abort.signal;
    },
    logger: input.logger,
    services: input.services,
    history: async (options) => throughJson(history.slice(options?.from ?? 0)),
    interrupt: <T>(request: unknown, options?: { callback?: unknown }) => {
      // A callback URL would promise a way in that nothing in process can answer.
      if (options?.callback)
        throw new AgentqError(
          'INVALID_INPUT',
          'context.interrupt with a callback needs a worker, Redis and the API: in process no URL can reach the run',
        );
      return resumeOrInterrupt<T>(input.resume, stepId, request);
    },
    // Saved before it is returned, as the engine saves it, so a retried attempt does not pay again.
    memo: async <T>(key: string, compute: (paid?: PaidCall) => Promise<T>, _options?: MemoOptions): Promise<T> => {
      if (key in memos) return throughJson(memos[key]) as T;
      const value = await compute({
        confirm: async () => {
          if (input.abort.reason) throw input.abort.reason;
        },
      });
      memos[key] = throughJson(value);
      return value;
    },
    recordUsage: (recorded) => addStepUsage(usage, recorded),
    // In process the step simply waits (nothing to park), and no one can send it an event.
    sleep: (duration) =>
      sleep(
        Math.max(0, typeof duration === 'number' ? duration : new Date(duration.until).getTime() - Date.now()),
        input.abort.signal,
      ),
    waitFor: () => {
      throw new AgentqError(
        'INVALID_INPUT',
        'context.waitFor needs a worker and Redis; in process no event can reach the run',
      );
    },
    callback: () => {
      throw new AgentqError(
        'INVALID_INPUT',
        'context.callback needs a worker, Redis and the API: in process no URL can reach the run',
      );
    },
    // A child run is a run of its own, in Redis: run the graph on a worker (testing/run-in-process.ts runs one graph).
    runGraph: () => {
      throw new Error('runInProcess: runGraph needs a worker (child runs live in Redis)');
    },
    runGraphs: () => {
      throw new Error('runInProcess: runGraphs needs a worker (child runs live in Redis)');
    },
    streamText: (text, call) => tokens.push({ text, call, node, superstep, task, attempt }),
    emit: async (type, data) => {
      events.push({ type, data: { ...data, node, superstep, task } });
    },
    tokenBudgetRemaining: input.tokenBudgetRemaining,
  };
}
