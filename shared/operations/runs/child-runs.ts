import { AgentqError } from '../../contracts/errors.js';
import { activeSpanRef } from '../../telemetry/telemetry.js';
import { runIdForChild } from '../../contracts/ids.js';
import { isTerminal } from '../../contracts/run-record.js';
import { ParkSignal } from '../../graph/park-signal.js';
import type { ChildLinks, ChildState } from '../../store/child-links.js';
import type { RunEnqueuer } from './run-enqueuer.js';

declare module '../../graph/node-context.js' {
  interface Services {
    /** Child runs (NodeContext.runGraph): a worker sets it; absent, `runGraph` throws. */
    childRuns?: ChildRuns;
  }
}

/** Children created or read at once (a round trip or two each). */
const AT_ONCE = 32;

/** The step that starts children. */
export interface ParentStep {
  runId: string;
  tenant: string;
  /** `s<k>.t<i>`. */
  stepId: string;
}

/** One child as the step asks for it; `key` names it within the step (its idempotency key, or its place). */
export interface ChildRequest {
  graph: string;
  input: unknown;
  key: string;
  graphVersion?: string;
}

interface ChildRunsOptions {
  links: ChildLinks;
  /** Creates the children, through the tenant's admission (origin 'child'). */
  enqueuer: RunEnqueuer;
  /** How long a waiting step sleeps unless woken (AGENTQ_CHILD_RUN_PARK_MS). */
  parkMs: number;
}

/**
 * Starts child runs for a parent's step and waits for them without holding a worker. Each child is
 * linked to the step before it is created (so the end of a child that finishes at once is counted), is
 * created at most once (its id comes from the parent, the step and its key), and when the step waits, it
 * parks (ParkSignal) until the run-finished hook of its last child wakes it (child-run-ends.ts). The woken
 * step runs its node again; this time every child has ended and their outputs are returned.
 */
export class ChildRuns {
  constructor(private readonly options: ChildRunsOptions) {}

  /** Starts the children (those not started yet); `wait`: → their outputs, or it parks or throws. */
  async start(parent: ParentStep, requests: readonly ChildRequest[], wait: boolean): Promise<unknown[]> {
    const { links } = this.options;
    const ids = requests.map((request) => runIdForChild(parent.runId, parent.stepId, request.key));
    await links.link(
      parent.runId,
      parent.stepId,
      requests.map((request, index) => ({ runId: ids[index]!, graph: request.graph, wait })),
      Date.now(),
    );
    const states = await links.states(ids);
    const missing = states.flatMap((state, index) => (state ? [] : [index]));
    await atMost(AT_ONCE, missing, async (index) => {
      states[index] = await this.create(parent, requests[index]!, ids[index]!, wait);
    });
    if (!wait) return ids.map((runId) => ({ runId }));
    const created = new Set(missing.map((index) => ids[index]!));
    return this.collect(parent, requests, ids, states as ChildState[], created);
  }

  /** The parent step's span (its node runs inside it), kept by the child for its root span's link. */
  private stepSpan(): { span?: string } {
    const span = activeSpanRef();
    return span ? { span } : {};
  }

  private async create(parent: ParentStep, request: ChildRequest, runId: string, wait: boolean): Promise<ChildState> {
    const { meta } = await this.options.enqueuer.enqueue(
      {
        graph: request.graph,
        ...(request.graphVersion === undefined ? {} : { graphVersion: request.graphVersion }),
        input: request.input,
        tenant: parent.tenant,
      },
      { runId, origin: 'child', parent: { runId: parent.runId, step: parent.stepId, wait, ...this.stepSpan() } },
    );
    return { status: meta.status, output: meta.output, error: meta.error };
  }

  /** → the outputs when every child ended (the first failure thrown), else the step parks. */
  private async collect(
    parent: ParentStep,
    requests: readonly ChildRequest[],
    ids: readonly string[],
    states: ChildState[],
    created: ReadonlySet<string>,
  ): Promise<unknown[]> {
    const { links, parkMs } = this.options;
    await this.settle(parent, ids, states);
    // A child that existed before this call and runs may have had its end counted already and then been
    // retried: it is waited on again, and read once more, so an end between the two reads is counted too.
    // (The children created just now were linked before they existed: their ends are counted by their hooks.)
    const older = ids.flatMap((id, index) => (isTerminal(states[index]!.status) || created.has(id) ? [] : [index]));
    if (older.length > 0) {
      await links.rearm(
        parent.runId,
        parent.stepId,
        older.map((index) => ids[index]!),
      );
      const again = await links.states(older.map((index) => ids[index]!));
      older.forEach((index, at) => {
        if (again[at]) states[index] = again[at];
      });
      await this.settle(
        parent,
        older.map((index) => ids[index]!),
        again.map((state) => state!),
      );
    }
    const running = ids.filter((_, index) => !isTerminal(states[index]!.status));
    if (running.length === 0) return states.map((state, index) => outputOf(state, ids[index]!, requests[index]!));
    throw new ParkSignal(
      parkMs,
      { childRuns: { waiting: running.length, of: ids.length, first: running[0] } },
      `the step waits for ${running.length} child run(s)`,
      async () => (await links.waiting(parent.runId, parent.stepId)) === 0,
    );
  }

  /** Counts the ends the step sees (each once, whoever counts it: the hook of a child lost with its worker counts nothing). */
  private async settle(
    parent: ParentStep,
    ids: readonly string[],
    states: readonly (ChildState | null)[],
  ): Promise<void> {
    const ended = ids.filter((_, index) => states[index] && isTerminal(states[index].status));
    await atMost(AT_ONCE, ended, (id) => this.options.links.settle(parent.runId, id));
  }
}

/** A completed child's output; CHILD_RUN_FAILED for one that failed or was cancelled. */
function outputOf(state: ChildState, runId: string, request: ChildRequest): unknown {
  if (state.status === 'completed') return state.output;
  const error = state.error;
  throw new AgentqError(
    'CHILD_RUN_FAILED',
    `child run ${runId} of graph ${request.graph} ${state.status}${error ? `: ${error.code}: ${error.message}` : ''}`,
    { retryable: false, details: { childRunId: runId, graph: request.graph, status: state.status, error } },
  );
}

/** Runs `work` on every item, `size` at a time at most. */
async function atMost<T>(size: number, items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, lane));
}
