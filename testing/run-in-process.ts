import pino from 'pino';
import { AgentqError, toAgentqError, type ErrorRecord } from '../shared/contracts/errors.js';
import type { Message, PendingInterrupt, StepUsage, Usage } from '../shared/contracts/run-record.js';
import { formatZodError } from '../shared/contracts/job-schema.js';
import { stateFrom, type StateOf } from '../shared/graph/channels.js';
import type { AnyGraph, Graph, NodeResult, Task } from '../shared/graph/graph.js';
import { InterruptSignal } from '../shared/graph/interrupt-signal.js';
import { enterGraph } from '../shared/graph/ready-gate.js';
import type { Services } from '../shared/graph/node-context.js';
import { backoffDelay } from '../shared/graph/retry-policy.js';
import type { Logger } from '../shared/telemetry/logger.js';
import { attemptError, retriesAfter } from '../worker/engine/attempt-failure.js';
import { runNode } from '../worker/engine/run-node.js';
import { stepLimitError } from '../worker/engine/step-limits.js';
import { superstepOutcome, superstepTransition } from '../worker/engine/superstep-transition.js';
import { inProcessContext, throughJson, type InProcessEvent, type InProcessToken } from './in-process-context.js';

export interface RunInProcessOptions {
  /** What nodes find in `context.services` (a `MockLanguageModel` as `llm`, tools, …). @default none */
  services?: Services;
  /** @default 'run-1' */
  runId?: string;
  /** @default 'default' */
  tenant?: string;
  /** The run's step limit, as `options.maxSteps` of a run. @default 100 (AGENTQ_DEFAULT_MAX_STEPS's default) */
  maxSteps?: number;
  /** The run's token budget, as `options.tokenBudget`. @default none */
  tokenBudget?: number;
  /** The run's deadline, this long after it starts. @default none */
  deadlineMs?: number;
  /** Earlier messages of the run's history (a conversation's previous turns). @default none */
  messages?: Message[];
  /** Wait each retried node's backoff before its next attempt, as a worker does. @default false: retry at once */
  backoff?: boolean;
  /** @default silent */
  logger?: Logger;
}

/** One committed step, in the engine's order: superstep, then task. */
export interface InProcessStep {
  /** 0, 1, 2, … over the run. */
  index: number;
  superstep: number;
  task: number;
  node: string;
  /** The payload of the `Send` that scheduled it. @default none */
  arg?: unknown;
  /** The attempt on which it succeeded (1 = first try). */
  attempts: number;
  /** The state update it returned (its messages apart). */
  update: Record<string, unknown>;
  /** The messages it appended to the run's history. */
  messages: Message[];
  /** Model usage, when it recorded some. */
  usage?: StepUsage;
}

/** A failed attempt that the node's retry policy retried. */
export interface InProcessRetry {
  superstep: number;
  task: number;
  node: string;
  attempt: number;
  error: ErrorRecord;
}

export interface InProcessResult {
  /** `waiting`: a node called `interrupt`; `resume` continues the run. */
  status: 'completed' | 'failed' | 'waiting';
  /** The graph's output, once completed. */
  output?: unknown;
  /** The run's state at its last committed superstep. */
  state: Record<string, unknown>;
  steps: InProcessStep[];
  /** The run's history: the seed, then each step's messages. */
  messages: Message[];
  /** While waiting: who asked what. */
  interrupt?: PendingInterrupt;
  /** When failed: the error, with the node and attempt that failed the run. */
  error?: ErrorRecord;
  retries: InProcessRetry[];
  /** Events the nodes emitted (tool calls, tool results, guardrails). */
  events: InProcessEvent[];
  /** Model text the nodes streamed. */
  tokens: InProcessToken[];
  usage: Usage;
  /** Answers the pending interrupt and runs on, as `POST /v1/runs/:id/resume` does. */
  resume(value: unknown): Promise<InProcessResult>;
}

type State = StateOf<Graph['channels']>;

/** How one task of a superstep ended. */
type TaskEnd =
  | { kind: 'ok'; task: Task; update: Record<string, unknown>; messages: Message[]; attempt: number; usage: StepUsage }
  | { kind: 'interrupt'; task: Task; request: unknown }
  | { kind: 'failed'; task: Task; error: AgentqError; attempt: number; usage: StepUsage };

/**
 * Runs a graph in this process, without Redis or a worker, to its end or its first interrupt: the
 * engine's node execution (timeouts, deadline), superstep transitions (reducers in task order,
 * routers, `Send`, subgraphs), step limits and retry policies, with the run's records in memory.
 */
export function runInProcess<G extends AnyGraph>(
  graph: G,
  input: unknown,
  options: RunInProcessOptions = {},
): Promise<InProcessResult> {
  return new InProcessRun(graph, options).start(input);
}

class InProcessRun {
  private state: State = {};
  private tasks: Task[] = [];
  private superstep = 0;
  private readonly steps: InProcessStep[] = [];
  private readonly messages: Message[];
  private readonly retries: InProcessRetry[] = [];
  private readonly events: InProcessEvent[] = [];
  private readonly tokens: InProcessToken[] = [];
  private readonly usage: Usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  /** Memos by step id: kept across a step's attempts and its re-run on resume. */
  private readonly memos = new Map<string, Record<string, unknown>>();
  /** Writes of the waiting superstep's tasks that finished, by task index (a resume re-runs only the rest). */
  private writes = new Map<number, Extract<TaskEnd, { kind: 'ok' }>>();
  private resumeAt: { stepId: string; value: unknown } | null = null;
  /** Where the run is: a waiting run's interrupt, else null. */
  private waiting: PendingInterrupt | null = null;
  private readonly deadlineAt: number | null;
  private readonly logger: Logger;

  constructor(
    private readonly graph: Graph,
    private readonly options: RunInProcessOptions,
  ) {
    this.messages = throughJson(options.messages ?? []);
    this.deadlineAt = options.deadlineMs === undefined ? null : Date.now() + options.deadlineMs;
    this.logger = options.logger ?? pino({ level: 'silent' });
  }

  async start(input: unknown): Promise<InProcessResult> {
    const graph = this.graph;
    const parsed = graph.inputSchema.safeParse(input);
    if (!parsed.success)
      return this.failed(
        new AgentqError(
          'INVALID_INPUT',
          `invalid input for graph ${graph.id}: ${formatZodError(parsed.error, 'input')}`,
        ),
      );
    try {
      this.state = stateFrom(graph.channels, throughJson(graph.initialState(parsed.data)));
      ({ state: this.state, tasks: this.tasks } = await enterGraph(graph, this.state));
    } catch (error) {
      return this.failed(toAgentqError(error));
    }
    if (this.tasks.length === 0)
      return this.failed(
        new AgentqError('INVALID_GRAPH', `graph ${graph.id} routes from START straight to END for this input`),
      );
    return this.loop();
  }

  private async loop(): Promise<InProcessResult> {
    while (this.tasks.length > 0) {
      const ends = await Promise.all(
        this.tasks.map((task, index) => this.writes.get(index) ?? this.runTask(task, index)),
      );
      const failed = ends.find((end) => end.kind === 'failed');
      if (failed) {
        // A run that fails counts the usage of its failing attempt (a commit counts the others').
        this.addUsage(failed.usage);
        return this.failed(failed.error, { node: failed.task.node, attempt: failed.attempt });
      }
      const index = ends.findIndex((end) => end.kind === 'interrupt');
      if (index >= 0) {
        this.writes = new Map(ends.flatMap((end, at) => (end.kind === 'ok' ? [[at, end] as const] : [])));
        const { task, request } = ends[index] as Extract<TaskEnd, { kind: 'interrupt' }>;
        return this.result('waiting', {
          interrupt: { node: task.node, stepId: `s${this.superstep}.t${index}`, request },
        });
      }
      const done = ends as Extract<TaskEnd, { kind: 'ok' }>[];
      this.writes = new Map();
      this.resumeAt = null;
      let transition;
      try {
        transition = await superstepTransition(
          this.graph,
          this.state,
          done.map((end) => ({ node: end.task.node, update: end.update })),
        );
      } catch (error) {
        return this.failed(toAgentqError(error), {
          node: done.map((end) => end.task.node).join(','),
          attempt: done.length === 1 ? done[0]!.attempt : 1,
        });
      }
      done.forEach((end, task) => this.commit(end, task));
      const outcome = superstepOutcome(this.graph, transition);
      // The next superstep reads the state as the run store gives it back.
      this.state = stateFrom(this.graph.channels, throughJson(transition.applied.state));
      this.superstep += 1;
      this.tasks = transition.next;
      if (outcome.kind === 'completed') return this.result('completed', { output: throughJson(outcome.output) });
    }
    return this.result('completed', { output: throughJson(this.graph.output(this.state)) });
  }

  private commit(end: Extract<TaskEnd, { kind: 'ok' }>, task: number): void {
    const counted = end.usage.inputTokens + end.usage.outputTokens > 0;
    if (counted) this.addUsage(end.usage);
    this.steps.push({
      index: this.steps.length,
      superstep: this.superstep,
      task,
      node: end.task.node,
      ...(end.task.arg === undefined ? {} : { arg: end.task.arg }),
      attempts: end.attempt,
      update: throughJson(end.update),
      messages: throughJson(end.messages),
      ...(counted ? { usage: end.usage } : {}),
    });
    this.messages.push(...throughJson(end.messages));
  }

  /** A task's attempts, as a step job's: a retryable failure runs it again while its policy allows. */
  private async runTask(task: Task, index: number): Promise<TaskEnd> {
    const node = this.graph.nodes.get(task.node);
    if (!node) {
      const error = new AgentqError('INTERNAL', `graph ${this.graph.id} has no node '${task.node}'`);
      return { kind: 'failed', task, error, attempt: 1, usage: emptyUsage() };
    }
    const stepId = `s${this.superstep}.t${index}`;
    const memos = this.memos.get(stepId) ?? {};
    this.memos.set(stepId, memos);
    for (let attempt = 1; ; attempt += 1) {
      const usage = emptyUsage();
      const limit = stepLimitError(
        {
          stepCount: this.steps.length,
          maxSteps: this.options.maxSteps ?? 100,
          tokenBudget: this.options.tokenBudget ?? null,
          usage: this.usage,
          deadlineAt: this.deadlineAt,
        },
        task.node,
        Date.now(),
      );
      if (limit) return { kind: 'failed', task, error: limit, attempt, usage };
      const history = [...this.messages];
      try {
        const result = await runNode({
          node,
          state: Object.freeze(throughJson(this.state)),
          deadlineAt: this.deadlineAt,
          context: (abort) =>
            inProcessContext({
              runId: this.options.runId ?? 'run-1',
              tenant: this.options.tenant ?? 'default',
              graph: this.graph.id,
              superstep: this.superstep,
              task: index,
              node: task.node,
              arg: task.arg,
              attempt,
              abort,
              logger: this.logger,
              services: this.options.services ?? {},
              history,
              memos,
              resume: this.resumeAt,
              usage,
              tokenBudgetRemaining: this.budgetLeft(),
              events: this.events,
              tokens: this.tokens,
            }),
        });
        const { messages = [], ...update } = (result ?? {}) as NodeResult<Graph['channels']>;
        return { kind: 'ok', task, update, messages, attempt, usage };
      } catch (thrown) {
        if (thrown instanceof InterruptSignal) return { kind: 'interrupt', task, request: thrown.request };
        const error = attemptError(thrown);
        if (!retriesAfter(node, error, attempt)) return { kind: 'failed', task, error, attempt, usage };
        this.retries.push({
          superstep: this.superstep,
          task: index,
          node: task.node,
          attempt,
          error: error.toRecord(),
        });
        if (this.options.backoff)
          await new Promise((resolve) => setTimeout(resolve, backoffDelay(node.retry, attempt)));
      }
    }
  }

  private budgetLeft(): number | null {
    const budget = this.options.tokenBudget;
    return budget === undefined ? null : Math.max(0, budget - this.usage.inputTokens - this.usage.outputTokens);
  }

  private addUsage(usage: StepUsage): void {
    this.usage.inputTokens += usage.inputTokens;
    this.usage.outputTokens += usage.outputTokens;
    this.usage.costUsd += usage.costUsd;
  }

  private failed(error: AgentqError, at: { node?: string; attempt?: number } = {}): InProcessResult {
    return this.result('failed', { error: { ...error.toRecord(), ...at } });
  }

  private result(
    status: InProcessResult['status'],
    extra: Pick<InProcessResult, 'output' | 'interrupt' | 'error'>,
  ): InProcessResult {
    this.waiting = extra.interrupt ?? null;
    return {
      status,
      ...extra,
      state: throughJson(this.state),
      steps: [...this.steps],
      messages: [...this.messages],
      retries: [...this.retries],
      events: [...this.events],
      tokens: [...this.tokens],
      usage: { ...this.usage },
      resume: (value) => this.resume(value),
    };
  }

  private async resume(value: unknown): Promise<InProcessResult> {
    const interrupt = this.waiting;
    if (!interrupt)
      throw new AgentqError(
        'CONFLICT',
        `run ${this.options.runId ?? 'run-1'} is not waiting; only a waiting run can be resumed`,
      );
    this.waiting = null;
    this.resumeAt = { stepId: interrupt.stepId, value: throughJson(value) };
    return this.loop();
  }
}

function emptyUsage(): StepUsage {
  return { inputTokens: 0, outputTokens: 0, costUsd: 0 };
}
