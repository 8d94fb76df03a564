import { context as otelContext, SpanStatusCode, trace } from '@opentelemetry/api';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { StepAbort } from '../shared/abort.js';
import { AgentqError, toAgentqError } from '../shared/errors.js';
import { applyUpdates, stateFrom, type StateOf } from '../shared/graph/channels.js';
import { mergeNextTasks } from '../shared/graph/define-graph.js';
import type { CompiledNode, Graph, NodeResult, Task } from '../shared/graph/graph.js';
import { InterruptSignal } from '../shared/graph/interrupt-signal.js';
import { createNodeContext } from './create-node-context.js';
import type { GraphRegistry } from '../shared/graph/graph-registry.js';
import type { Services } from '../shared/graph/node-context.js';
import { graphIdOf, START_NODE, type StepJobData } from '../shared/job-schema.js';
import { lazyChild, type Logger } from '../shared/logger.js';
import type { RedisRunStore, RunMeta, StepMeta } from '../shared/redis/redis-run-store.js';
import { CANCELLED_ERROR as CANCELLED } from '../shared/redis/run-scripts.js';
import type { Message, Usage } from '../shared/run-record.js';
import type { Telemetry } from '../shared/telemetry/telemetry.js';
import type { StepObservation, StepObserver } from '../shared/graph/step-observer.js';
import type { ActiveSteps } from './active-steps.js';
import type { StepJobs } from './step-jobs.js';
import type { StartAdmission } from './intake-processor.js';
import { StepAbortHandle } from './step-abort.js';

/** How long a step for a graph version this worker lacks waits before another worker may take it. */
const DEFER_MS = 1000; // #19: short, so a run left for the worker that has its graph is not held up long

export interface StepProcessorOptions {
  store: RedisRunStore;
  registry: GraphRegistry;
  stepJobs: StepJobs;
  activeSteps: ActiveSteps;
  services: Services;
  logger: Logger;
  telemetry: Telemetry;
  observers?: StepObserver[];
  /** Takes a run in from its start job (IntakeProcessor.admitStart); → superstep 0's tasks (and its task begun), or null. */
  admitStart: (meta: RunMeta, job: Job<StepJobData>, token?: string) => Promise<StartAdmission | null>;
}

type Outcome = 'missing' | 'skip' | 'stale' | 'handoff' | 'written' | 'cancelled' | 'committed' | 'fenced' | 'failed' | 'waiting';

/**
 * Runs one step job (DESIGN §2): read the cursor first; run the node with an AbortSignal; commit with
 * one fenced Lua script; only then add the next superstep's jobs. This is the only place that turns
 * errors into BullMQ's signals.
 */
export class StepProcessor {
  constructor(private readonly options: StepProcessorOptions) {}

  process = (job: Job<StepJobData>, token?: string): Promise<Outcome> => this.step(job, token, job.data.node);

  /** `node`: the task's node, for the step-start event (a start job learns it when it takes the run in). */
  private async step(job: Job<StepJobData>, token: string | undefined, node: string): Promise<Outcome> {
    const { store, stepJobs } = this.options;
    const { runId, superstep, task } = job.data;
    const attempt = job.attemptsMade + 1;
    const begin = await store.begin(runId, superstep, task, { node, superstep, task, attempt }, Date.now());
    switch (begin.kind) {
      case 'missing':
      case 'skip':
      case 'stale':
        return begin.kind;
      case 'admit': {
        // A start job (DESIGN §2.1): take the run in, then run its first task here. Only a job that has
        // not taken the run in yet gets here (a second 'admit' would mean the intake was refused).
        const admission = node === START_NODE ? await this.options.admitStart(begin.meta, job, token) : null;
        const entry = admission?.tasks[task]?.node;
        if (!entry) return 'stale';
        // Taken in now: the admission began the task too. Taken in by someone else: BEGIN decides.
        const { started } = admission;
        return started ? this.run(job, token, entry, started.meta, started.state, started.memos, attempt) : this.step(job, token, entry);
      }
      case 'handoff':
        // Committed before, maybe not handed on (a crash between commit and add): make sure the next jobs exist.
        if (begin.status === 'running' || begin.status === 'cancelling') {
          await stepJobs.ensure(runId, begin.superstep, begin.tasks, job.data.graph);
        }
        return 'handoff';
      case 'written': {
        const meta = await store.get(runId);
        const graph = meta && this.graphOf(meta);
        if (meta && graph) await this.advance(meta, graph, graphIdOf(meta));
        return 'written';
      }
      case 'cancel':
        await store.finish(runId, 'cancelled', CANCELLED, Date.now(), { onlyFrom: 'cancelling' });
        return 'cancelled';
      case 'run':
        // The run's cursor names the task's node (a start job's own data says START_NODE).
        return this.run(job, token, begin.meta.tasks?.[task]?.node ?? node, begin.meta, begin.state, begin.memos, attempt);
    }
  }

  private graphOf(meta: StepMeta): Graph | undefined {
    return this.options.registry.find(meta.graph, meta.graphVersion);
  }

  /** The step inside its span `agent.step <node>`, a child of the run's root span (DESIGN §8). */
  private async run(job: Job<StepJobData>, token: string | undefined, nodeName: string, meta: StepMeta, stored: Record<string, unknown>, memos: Record<string, unknown>, attempt: number): Promise<Outcome> {
    const { telemetry } = this.options;
    if (!telemetry.enabled) return this.runStep(job, token, nodeName, meta, stored, memos, attempt);
    const parent = telemetry.runContext(meta.trace);
    const span = telemetry.tracer.startSpan(
      `agent.step ${nodeName}`,
      {
        attributes: {
          'agentq.run.id': meta.id,
          'agentq.graph': `${meta.graph}@${meta.graphVersion ?? ''}`,
          'agentq.step.superstep': job.data.superstep,
          'agentq.step.task': job.data.task,
          'agentq.step.node': nodeName,
          'agentq.step.attempt': attempt,
        },
      },
      parent,
    );
    return otelContext.with(trace.setSpan(parent, span), async () => {
      try {
        const outcome = await this.runStep(job, token, nodeName, meta, stored, memos, attempt);
        span.setAttribute('agentq.step.outcome', outcome);
        return outcome;
      } catch (error) {
        if (!(error instanceof DelayedError)) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        }
        throw error;
      } finally {
        span.end();
      }
    });
  }

  private async runStep(job: Job<StepJobData>, token: string | undefined, nodeName: string, meta: StepMeta, stored: Record<string, unknown>, memos: Record<string, unknown>, attempt: number): Promise<Outcome> {
    const { store, logger: baseLogger } = this.options;
    const { runId, superstep, task } = job.data;
    const graph = this.graphOf(meta);
    if (!graph) {
      // Never run a step of a graph version this worker lacks: leave it for a worker that has it.
      await store.addEvent(runId, 'step-deferred', {
        node: nodeName,
        superstep,
        reason: `this worker lacks graph ${meta.graph}@${meta.graphVersion ?? 'latest'}; it has ${this.options.registry.ids().join(', ') || 'none'}`,
      });
      await job.moveToDelayed(Date.now() + DEFER_MS, token);
      throw new DelayedError();
    }
    const node = graph.nodes.get(nodeName);
    const tasks = meta.tasks ?? [];
    if (!node || !tasks[task]) {
      return this.fail(meta, superstep, new AgentqError('INTERNAL', `graph ${graph.id} has no node '${nodeName}' (task ${task} of superstep ${superstep})`), nodeName, attempt);
    }
    const now = Date.now();
    if (meta.stepCount >= meta.maxSteps) {
      return this.fail(meta, superstep, new AgentqError('MAX_STEPS', `the run reached its limit of ${meta.maxSteps} steps before node '${nodeName}'; raise options.maxSteps if the graph needs more`), nodeName, attempt);
    }
    if (meta.tokenBudget !== null && meta.usage.inputTokens + meta.usage.outputTokens >= meta.tokenBudget) {
      return this.fail(meta, superstep, new AgentqError('BUDGET_EXCEEDED', `the run spent ${meta.usage.inputTokens + meta.usage.outputTokens} of its ${meta.tokenBudget}-token budget before node '${nodeName}'; raise options.tokenBudget to let it continue`), nodeName, attempt);
    }
    if (meta.deadlineAt !== null && now >= meta.deadlineAt) {
      return this.fail(meta, superstep, new AgentqError('DEADLINE', `the run passed its deadline (${new Date(meta.deadlineAt).toISOString()}) before node '${nodeName}'`), nodeName, attempt);
    }

    const state = stateFrom(graph.channels, stored);
    const logger = lazyChild(baseLogger, { runId, stepIndex: superstep, task, node: nodeName, attempt });
    const startedAt = new Date(now).toISOString();
    let result: NodeResult<typeof graph.channels> | void;
    const usage: Usage & { model?: string } = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    try {
      result = await this.execute(node, state, meta, job.data, attempt, logger, usage, memos);
    } catch (error) {
      return this.onFailure(job, token, meta, node, attempt, error, logger, usage);
    }
    const stepUsage = usage.inputTokens + usage.outputTokens > 0 ? usage : undefined;

    const { messages = [], ...update } = (result ?? {}) as NodeResult<typeof graph.channels>;
    const step = { superstep, task, node: nodeName, attempts: attempt, startedAt, endedAt: new Date().toISOString(), ...(stepUsage ? { usage: stepUsage } : {}) };
    if (tasks.length === 1) {
      let next: Task[];
      let applied: ReturnType<typeof applyUpdates>;
      try {
        applied = applyUpdates(graph.channels, state, [update as never]);
        next = graph.next(nodeName, applied.state);
      } catch (error) {
        return this.fail(meta, superstep, toAgentqError(error), nodeName, attempt);
      }
      const outcome = next.length > 0 ? { kind: 'next' as const, tasks: next } : { kind: 'completed' as const, output: graph.output(applied.state) };
      const committing = store.commit(
        { runId, superstep, task, mode: 'single', step, totalTasks: 1, outcome, state: pick(applied.state, applied.changed), messages, ...(stepUsage ? { usage: stepUsage } : {}) },
        Date.now(),
      );
      // The next job's add goes out right behind the commit, on the same connection (start-worker.ts), so
      // Redis runs it after the commit without a round trip in between. Should the commit be fenced, the
      // job finds the cursor past it and is dropped like any stale duplicate (or its id is taken already).
      const adding = outcome.kind === 'next' ? this.options.stepJobs.add(runId, superstep + 1, next, graphIdOf(meta)) : undefined;
      const [committed] = await Promise.all([committing, adding]);
      logger.debug({ outcome: committed.kind }, 'step committed');
      return committed.kind === 'fenced' || committed.kind === 'missing' ? 'fenced' : 'committed';
    }
    const stored_ = await store.commit(
      {
        runId,
        superstep,
        task,
        mode: 'task',
        step,
        write: { node: nodeName, update, messages },
        totalTasks: tasks.length,
        outcome: { kind: 'next', tasks: [] },
        state: {},
        messages: [],
        ...(stepUsage ? { usage: stepUsage } : {}),
      },
      Date.now(),
    );
    if (stored_.kind !== 'stored') return 'fenced';
    if (stored_.count === tasks.length) await this.advance(meta, graph, graphIdOf(meta));
    return 'committed';
  }

  /** Runs the node, racing it against its abort so an abort is prompt even if the node ignores its signal. */
  private async execute(
    node: CompiledNode,
    state: StateOf<Graph['channels']>,
    meta: StepMeta,
    data: StepJobData,
    attempt: number,
    logger: Logger,
    usage: Usage & { model?: string },
    memos: Record<string, unknown>,
  ): Promise<NodeResult<Graph['channels']> | void> {
    const abort = new StepAbortHandle();
    const release = this.options.activeSteps.add(data.runId, abort);
    const timers: NodeJS.Timeout[] = [];
    if (node.timeoutMs !== undefined) {
      timers.push(setTimeout(() => abort.abort(new StepAbort('timeout', `node '${node.name}' exceeded its timeout of ${node.timeoutMs} ms`)), node.timeoutMs));
    }
    if (meta.deadlineAt !== null) {
      timers.push(setTimeout(() => abort.abort(new StepAbort('deadline', `the run passed its deadline (${new Date(meta.deadlineAt!).toISOString()})`)), Math.max(0, meta.deadlineAt - Date.now())));
    }
    const { store, services } = this.options;
    const context = createNodeContext({ store, services, meta, data, node: node.name, attempt, abort, logger, usage, memos });
    try {
      const observation: StepObservation = {
        runId: data.runId,
        graph: data.graph,
        node: node.name,
        superstep: data.superstep,
        task: data.task,
        attempt,
        startedAt: performance.now(),
      };
      this.observe('onNodeStart', observation);
      const running = Promise.resolve().then(() => node.run(state, context));
      running.catch(() => undefined); // an abandoned node's late failure must not become an unhandled rejection
      try {
        const result = await abort.race(running);
        this.observe('onNodeEnd', { ...observation, endedAt: performance.now(), outcome: 'ok' });
        return result;
      } catch (error) {
        this.observe('onNodeEnd', { ...observation, endedAt: performance.now(), outcome: 'error' });
        throw error;
      }
    } finally {
      for (const timer of timers) clearTimeout(timer);
      release();
    }
  }

  private observe(event: 'onNodeStart' | 'onNodeEnd', observation: StepObservation): void {
    for (const observer of this.options.observers ?? []) {
      try {
        observer[event]?.(observation);
      } catch {
        // An observer must not break a step.
      }
    }
  }

  private async onFailure(
    job: Job<StepJobData>,
    token: string | undefined,
    meta: StepMeta,
    node: CompiledNode,
    attempt: number,
    thrown: unknown,
    logger: Logger,
    usage: Usage,
  ): Promise<Outcome> {
    const { store } = this.options;
    const { runId, superstep } = job.data;
    if (thrown instanceof InterruptSignal) {
      await store.interrupt(runId, superstep, { node: node.name, stepId: `s${superstep}.t${job.data.task}`, request: thrown.request }, Date.now());
      logger.info('step interrupted: the run waits for input');
      return 'waiting';
    }
    const abort = thrown instanceof StepAbort ? thrown : undefined;
    if (abort?.kind === 'cancel') {
      await store.finish(runId, 'cancelled', CANCELLED, Date.now(), { superstep });
      return 'cancelled';
    }
    if (abort?.kind === 'shutdown') {
      // Release the step to another worker without spending an attempt.
      logger.info('worker shutting down: step released');
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    const error =
      abort?.kind === 'timeout'
        ? new AgentqError('TIMEOUT', abort.message, { retryable: true })
        : abort?.kind === 'deadline'
          ? new AgentqError('DEADLINE', abort.message)
          : toAgentqError(thrown);
    if (error.retryAfterMs !== undefined && error.retryable) {
      // The provider said when to come back (429 Retry-After): park the step without spending an attempt.
      logger.warn({ code: error.code, retryAfterMs: error.retryAfterMs }, 'step parked until the provider allows another request');
      await store.addEvent(runId, 'step-retry', { node: node.name, superstep, attempt, parkedMs: error.retryAfterMs, error: error.toRecord() });
      await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
      throw new DelayedError();
    }
    // A start job's attempts were set before its node was known: the fewer of the two counts.
    if (node.retry.retryOn(error) && attempt < Math.min(node.retry.maxAttempts, job.opts.attempts ?? node.retry.maxAttempts)) {
      logger.warn({ err: error.message, code: error.code }, 'step failed; it will be retried');
      await store.addEvent(runId, 'step-retry', { node: node.name, superstep, attempt, error: error.toRecord() });
      // So BullMQ's backoff (worker settings) finds the node's policy for the next attempt.
      if (job.data.node === START_NODE) await job.updateData({ ...job.data, node: node.name });
      throw error; // BullMQ retries it with the node's backoff
    }
    logger.error({ err: error.message, code: error.code }, 'step failed; the run fails');
    // A retried attempt re-reads its memoised responses and records their usage again; only a step that
    // ends the run here has its usage counted outside a commit.
    if (usage.inputTokens + usage.outputTokens > 0) await store.addUsage(runId, usage);
    return this.fail(meta, superstep, error, node.name, attempt);
  }

  /** Fails the run (context kept), then the job too, so Bull Board shows where it ended. */
  private async fail(meta: StepMeta, superstep: number, error: AgentqError, node: string, attempt: number): Promise<never> {
    await this.options.store.finish(meta.id, 'failed', { ...error.toRecord(), node, attempt }, Date.now(), { superstep });
    throw new UnrecoverableError(`${error.code}: ${error.message}`);
  }

  /** The last task of a parallel superstep merges all writes (in task order) and advances. */
  private async advance(meta: StepMeta, graph: Graph, graphId: string): Promise<void> {
    const { store, stepJobs } = this.options;
    const tasks = meta.tasks ?? [];
    const writes = await store.writes(meta.id);
    if (writes.size < tasks.length) return;
    const stored = await store.state(meta.id);
    const state = stateFrom(graph.channels, stored);
    const ordered = [...writes.entries()].sort(([a], [b]) => a - b).map(([, write]) => write);
    let next: Task[];
    let applied: ReturnType<typeof applyUpdates>;
    try {
      applied = applyUpdates(graph.channels, state, ordered.map((write) => write.update as never));
      next = mergeNextTasks(ordered.map((write) => graph.next(write.node, applied.state)));
    } catch (error) {
      await this.fail(meta, meta.superstep, toAgentqError(error), ordered.map((write) => write.node).join(','), 1).catch(() => undefined);
      return;
    }
    const messages: Message[] = ordered.flatMap((write) => write.messages);
    const outcome = next.length > 0 ? { kind: 'next' as const, tasks: next } : { kind: 'completed' as const, output: graph.output(applied.state) };
    const committed = await store.commit(
      { runId: meta.id, superstep: meta.superstep, task: -1, mode: 'advance', totalTasks: tasks.length, outcome, state: pick(applied.state, applied.changed), messages },
      Date.now(),
    );
    if (committed.kind === 'advanced') await stepJobs.add(meta.id, meta.superstep + 1, next, graphId);
  }
}

function pick(state: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, state[key]]));
}

