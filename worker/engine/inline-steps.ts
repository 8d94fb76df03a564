import { AgentqError } from '../../shared/contracts/errors.js';
import type { StateOf } from '../../shared/graph/channels.js';
import type { Graph, NodeResult, Task } from '../../shared/graph/graph.js';
import type { NodeContext, Services } from '../../shared/graph/node-context.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { StepMeta } from '../../shared/store/redis-run-store.js';
import type { Message } from '../../shared/contracts/run-record.js';
import type { InlineCommit } from './step-transitions.js';
import { superstepTransition, type SuperstepTransition } from './superstep-transition.js';

/** Inline steps one job runs after its own, at most: a bound on how long a job holds a run without a hop. */
const MAX_INLINE_STEPS = 16;

interface InlineRun {
  commits: InlineCommit[];
  /** The state after the last inline step, its changed keys since the job's own step, and what comes next. */
  state: Record<string, unknown>;
  changed: Set<string>;
  next: Task[];
}

/**
 * Runs the nodes marked `inline: true` that follow a step as its only next task, one after another, in
 * the job of that step. Each becomes a commit of its own, sent in the same transition
 * script as the job's step, so each is fenced and recorded like any step. It stops at a node not marked
 * inline, a parallel superstep, the end, the run's step limit or deadline, MAX_INLINE_STEPS, or a node
 * that throws — that one then runs as its own job, with its own attempts, as if nothing were inline.
 */
export async function runInlineSteps(input: {
  graph: Graph;
  meta: StepMeta;
  /** The superstep of the first inline step (the job's own + 1). */
  superstep: number;
  state: Record<string, unknown>;
  next: Task[];
  services: Services;
  logger: Logger;
  signal: AbortSignal;
}): Promise<InlineRun> {
  const { graph, meta, services, logger, signal } = input;
  const commits: InlineCommit[] = [];
  const changed = new Set<string>();
  let { state, next } = input;
  let superstep = input.superstep;
  // The job's own step counts one; the run's step limit and deadline are for the step jobs to enforce.
  while (
    next.length === 1 &&
    commits.length < MAX_INLINE_STEPS &&
    meta.stepCount + 1 + commits.length < meta.maxSteps
  ) {
    const task = next[0]!;
    const node = graph.nodes.get(task.node);
    if (!node?.inline || signal.aborted || (meta.deadlineAt !== null && Date.now() >= meta.deadlineAt)) break;
    const startedAt = new Date().toISOString();
    let messages: Message[];
    let applied: SuperstepTransition['applied'];
    let outcome: InlineCommit['request']['outcome'];
    const events: InlineCommit['events'] = [];
    try {
      const context = inlineNodeContext({
        runId: meta.id,
        tenant: meta.tenant,
        superstep,
        node: task.node,
        arg: task.arg,
        services,
        logger,
        signal,
        events,
      });
      const result = await node.run(Object.freeze(state) as StateOf<Graph['channels']>, context);
      const { messages: written = [], ...update } = (result ?? {}) as NodeResult<Graph['channels']>;
      messages = written;
      const moved = await superstepTransition(graph, state as StateOf<Graph['channels']>, [
        { node: task.node, update },
      ]);
      applied = moved.applied;
      const after = moved.next;
      outcome =
        after.length > 0 ? { kind: 'next', tasks: after } : { kind: 'completed', output: graph.output(applied.state) };
    } catch (error) {
      logger.debug({ node: task.node, err: error }, 'inline node did not complete inline; it runs as its own step job');
      break;
    }
    const changedHere = Object.fromEntries(
      applied.changed.map((key) => [key, (applied.state as Record<string, unknown>)[key]]),
    );
    for (const key of applied.changed) changed.add(key);
    commits.push({
      request: {
        runId: meta.id,
        superstep,
        task: 0,
        mode: 'single',
        step: { superstep, task: 0, node: task.node, attempts: 1, startedAt, endedAt: new Date().toISOString() },
        totalTasks: 1,
        outcome,
        state: changedHere,
        messages,
      },
      startData: { node: task.node, superstep, task: 0, attempt: 1 },
      events,
    });
    state = applied.state as Record<string, unknown>;
    next = outcome.kind === 'next' ? outcome.tasks : [];
    superstep += 1;
  }
  return { commits, state, changed, next };
}

/**
 * An inline node's context: state in, update out. What would need a job of its own is refused. Events it
 * emits are kept in `events` and written by its commit, between its step-start and step-end, as a step
 * job's would be (the node's own fields added as `emit` adds them).
 */
function inlineNodeContext(input: {
  runId: string;
  tenant: string;
  superstep: number;
  node: string;
  arg: unknown;
  services: Services;
  logger: Logger;
  signal: AbortSignal;
  events: InlineCommit['events'];
}): NodeContext {
  const { runId, tenant, superstep, node, arg, services, logger, signal, events } = input;
  const refuse = (what: string) => () => {
    throw new AgentqError(
      'INVALID_INPUT',
      `node '${node}' is marked inline: true but uses ${what}; inline nodes only read state, emit events and return an update (remove inline: true)`,
    );
  };
  return {
    runId,
    tenant,
    stepIndex: superstep,
    task: 0,
    stepId: `s${superstep}.t0`,
    node,
    attempt: 1,
    arg,
    abortSignal: signal,
    logger,
    services,
    history: refuse('history()'),
    interrupt: refuse('interrupt()'),
    memo: refuse('memo()'),
    recordUsage: refuse('recordUsage()'),
    sleep: refuse('sleep()'),
    waitFor: refuse('waitFor()'),
    callback: refuse('callback()'),
    runGraph: refuse('runGraph()'),
    runGraphs: refuse('runGraphs()'),
    emit: async (type, data) => {
      events.push({ type, data: { ...data, node, superstep, task: 0 } });
    },
    tokenBudgetRemaining: null,
  };
}
