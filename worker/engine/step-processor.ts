import { context as otelContext, SpanStatusCode, trace } from '@opentelemetry/api';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { StepAbort } from '../../shared/contracts/abort.js';
import { AgentqError, toAgentqError } from '../../shared/contracts/errors.js';
import { applyUpdates, stateFrom, type StateOf } from '../../shared/graph/channels.js';
import { mergeNextTasks } from '../../shared/graph/define-graph.js';
import type { CompiledNode, Graph, NodeResult, Task } from '../../shared/graph/graph.js';
import { InterruptSignal } from '../../shared/graph/interrupt-signal.js';
import { createNodeContext } from './create-node-context.js';
import type { GraphRegistry } from '../../shared/graph/graph-registry.js';
import type { Services } from '../../shared/graph/node-context.js';
import { graphIdOf, START_NODE, type StepJobData } from '../../shared/contracts/job-schema.js';
import { lazyChild, type Logger } from '../../shared/telemetry/logger.js';
import {
  parseStateText,
  type RedisRunStore,
  type RunMeta,
  type StateText,
  type StepMeta,
} from '../../shared/store/redis-run-store.js';
import { CANCELLED_ERROR as CANCELLED } from '../../shared/store/run-scripts.js';
import type { Message, Usage } from '../../shared/contracts/run-record.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import type { StepObservation, StepObserver } from '../../shared/graph/step-observer.js';
import type { ActiveSteps } from './active-steps.js';
import type { StartAdmission } from './intake-processor.js';
import { StepAbortHandle } from './step-abort.js';
import type { StateCache } from './state-cache.js';
import type { StepDelivery, StepResult } from './step-worker.js';
import type { FinishingJob, StepTransitions } from './step-transitions.js';
import { runInlineSteps } from './inline-steps.js';
import type { PaidClaims } from './paid-claims.js';
import { parkOnRedisFault, parksStep } from './redis-fault-park.js';
import type { WarningGate } from '../../shared/telemetry/warning-gate.js';

/** Inline steps are short pure functions: nothing aborts them (a shutdown waits for the job as for any). */
const NEVER = new AbortController().signal;

/** How long a step for a graph version this worker lacks waits before another worker may take it. */
const DEFER_MS = 1000; // #19: short, so a run left for the worker that has its graph is not held up long

export interface StepProcessorOptions {
  /** Claims on paid work (issue 20): a duplicate delivery waits for the call in flight instead of paying again. */
  claims?: PaidClaims;
  /** A claim's longest hold when the node has no timeout (AGENTQ_PAID_CLAIM_MS). */
  paidClaimMs?: number;
  store: RedisRunStore;
  registry: GraphRegistry;
  transitions: StepTransitions;
  stateCache: StateCache;
  /** Eager hops in a row a run may take on this worker before its next job goes through the queue (AGENTQ_EAGER_HOPS). */
  eagerHops: number;
  activeSteps: ActiveSteps;
  services: Services;
  logger: Logger;
  telemetry: Telemetry;
  observers?: StepObserver[];
  /** A step that met a Redis fault is retried after this, no attempt spent (AGENTQ_REDIS_FAULT_DELAY_MS, issue 34). @default 1000 */
  redisFaultDelayMs?: number;
  /** Repeated warnings, one line per kind per interval (issue 34). */
  warnings?: WarningGate;
  /** Takes a run in from its start job (IntakeProcessor.admitStart); → superstep 0's tasks (and its task begun), or null. */
  admitStart: (meta: RunMeta, job: Job<StepJobData>, token?: string) => Promise<StartAdmission | null>;
}

type Outcome = 'missing' | 'skip' | 'stale' | 'written' | 'cancelled' | 'committed' | 'fenced' | 'failed' | 'waiting';

/** How the step's job is finished when its step commits: by the transition script, with what this worker wants next. */
interface StepJob {
  job: Job<StepJobData>;
  token: string | undefined;
  delivery: StepDelivery;
  fetchNext: () => boolean;
}

/**
 * Runs one step job (DESIGN §2, engine v2): its cursor comes with it (or is read first); run the node with
 * an AbortSignal; then one script commits, fenced, adds the next superstep's jobs and finishes this job
 * (handing back the next). This is the only place that turns errors into BullMQ's signals.
 */
export class StepProcessor {
  constructor(private readonly options: StepProcessorOptions) {}

  /** A StepHandler (step-worker.ts). */
  process = async (
    job: Job<StepJobData>,
    token: string | undefined,
    delivery: StepDelivery = { hops: 0 },
    fetchNext: () => boolean = () => false,
  ): Promise<StepResult> => {
    const at: StepJob = { job, token, delivery, fetchNext };
    let transition: StepResult['transition'];
    try {
      const outcome = await this.step(at, job.data.node, delivery.begin, (result) => (transition = result));
      return transition ? { outcome, transition } : { outcome };
    } catch (error) {
      // Issue 34: a Redis fault is not the step's failure: parked, no attempt spent.
      if (!transition && parksStep(error))
        return parkOnRedisFault(job, token, error, {
          delayMs: this.options.redisFaultDelayMs ?? 1000,
          warnings: this.options.warnings,
        });
      // After its commit finished the job, a failure (a parallel superstep's advance) is no longer the
      // job's: the run is at a committed boundary, and the reconciler re-drives it if nothing else does.
      if (!transition) throw error;
      this.options.logger.warn(
        { runId: job.data.runId, err: String(error) },
        'step failed after its commit; the reconciler will re-drive the run',
      );
      return { outcome: 'committed', transition };
    }
  };

  /**
   * `node`: the task's node, for the step-start event (a start job learns it when it takes the run in).
   * `delivered`: BEGIN done by the script that handed the job out. `finished`: receives the transition
   * that finished the job, when the step's commit did.
   */
  private async step(
    at: StepJob,
    node: string,
    delivered: StepDelivery['begin'],
    finished: (result: NonNullable<StepResult['transition']>) => void,
  ): Promise<Outcome> {
    const { store, stateCache } = this.options;
    const { job, token } = at;
    const { runId, superstep, task } = job.data;
    const attempt = job.attemptsMade + 1;
    const begin =
      delivered ??
      (await store.begin(
        runId,
        superstep,
        task,
        { node, superstep, task, attempt },
        Date.now(),
        stateCache.superstepOf(runId),
      ));
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
        return started
          ? this.run(
              at,
              entry,
              started.meta,
              await this.stateOf(runId, started.meta.superstep, started.state),
              started.memos,
              attempt,
              finished,
            )
          : this.step(at, entry, undefined, finished);
      }
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
        return this.run(
          at,
          begin.meta.tasks?.[task]?.node ?? node,
          begin.meta,
          await this.stateOf(runId, begin.meta.superstep, begin.state),
          begin.memos,
          attempt,
          finished,
        );
    }
  }

  /** The state BEGIN sent, or (when it sent none: the cursor matched this worker's cache) the cached one; a read if neither. */
  private async stateOf(runId: string, superstep: number, sent: StateText | null): Promise<StateText> {
    if (sent) {
      this.options.stateCache.set(runId, superstep, sent);
      return sent;
    }
    const cached = this.options.stateCache.get(runId, superstep);
    if (cached) return cached;
    // Evicted between BEGIN and here (a full cache under load): read it.
    const stored = await this.options.store.state(runId);
    const text = { base: JSON.stringify(stored), changed: {} };
    this.options.stateCache.set(runId, superstep, text);
    return text;
  }

  private graphOf(meta: StepMeta): Graph | undefined {
    return this.options.registry.find(meta.graph, meta.graphVersion);
  }

  /** The step inside its span `agent.step <node>`, a child of the run's root span (DESIGN §8). */
  private async run(
    at: StepJob,
    nodeName: string,
    meta: StepMeta,
    stored: StateText,
    memos: Record<string, unknown>,
    attempt: number,
    finished: (result: NonNullable<StepResult['transition']>) => void,
  ): Promise<Outcome> {
    const { telemetry } = this.options;
    const { job } = at;
    if (!telemetry.enabled) return this.runStep(at, nodeName, meta, stored, memos, attempt, finished);
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
        const outcome = await this.runStep(at, nodeName, meta, stored, memos, attempt, finished);
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

  private async runStep(
    at: StepJob,
    nodeName: string,
    meta: StepMeta,
    stored: StateText,
    memos: Record<string, unknown>,
    attempt: number,
    finished: (result: NonNullable<StepResult['transition']>) => void,
  ): Promise<Outcome> {
    const { store, logger: baseLogger, transitions, stateCache } = this.options;
    const { job, token } = at;
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
      return this.fail(
        meta,
        superstep,
        new AgentqError(
          'INTERNAL',
          `graph ${graph.id} has no node '${nodeName}' (task ${task} of superstep ${superstep})`,
        ),
        nodeName,
        attempt,
      );
    }
    const now = Date.now();
    if (meta.stepCount >= meta.maxSteps) {
      return this.fail(
        meta,
        superstep,
        new AgentqError(
          'MAX_STEPS',
          `the run reached its limit of ${meta.maxSteps} steps before node '${nodeName}'; raise options.maxSteps if the graph needs more`,
        ),
        nodeName,
        attempt,
      );
    }
    if (meta.tokenBudget !== null && meta.usage.inputTokens + meta.usage.outputTokens >= meta.tokenBudget) {
      return this.fail(
        meta,
        superstep,
        new AgentqError(
          'BUDGET_EXCEEDED',
          `the run spent ${meta.usage.inputTokens + meta.usage.outputTokens} of its ${meta.tokenBudget}-token budget before node '${nodeName}'; raise options.tokenBudget to let it continue`,
        ),
        nodeName,
        attempt,
      );
    }
    if (meta.deadlineAt !== null && now >= meta.deadlineAt) {
      return this.fail(
        meta,
        superstep,
        new AgentqError(
          'DEADLINE',
          `the run passed its deadline (${new Date(meta.deadlineAt).toISOString()}) before node '${nodeName}'`,
        ),
        nodeName,
        attempt,
      );
    }

    const state = stateFrom(graph.channels, parseStateText(stored));
    const logger = lazyChild(baseLogger, { runId, stepIndex: superstep, task, node: nodeName, attempt });
    const startedAt = new Date(now).toISOString();
    let result: NodeResult<typeof graph.channels> | void;
    let ended: StepObservation | undefined; // onNodeEnd's observation (when an observer watches nodes), told after the commit (with the state it made)
    const usage: Usage & { model?: string } = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    try {
      ({ result, ended } = await this.execute(node, state, meta, job.data, attempt, logger, usage, memos));
    } catch (error) {
      return this.onFailure(job, token, meta, node, attempt, error, logger, usage);
    }
    const stepUsage = usage.inputTokens + usage.outputTokens > 0 ? usage : undefined;
    // The node context adds what it saves to `memos`: empty, the step has no memo field to drop.
    const hadMemos = hasKeys(memos);

    const { messages = [], ...update } = (result ?? {}) as NodeResult<typeof graph.channels>;
    const step = {
      superstep,
      task,
      node: nodeName,
      attempts: attempt,
      startedAt,
      endedAt: new Date().toISOString(),
      ...(stepUsage ? { usage: stepUsage } : {}),
    };
    const graphId = graphIdOf(meta);
    if (tasks.length === 1) {
      let next: Task[];
      let applied: ReturnType<typeof applyUpdates>;
      try {
        applied = applyUpdates(graph.channels, state, [update as never]);
        const routed = graph.next(nodeName, applied.state);
        next = Array.isArray(routed) ? routed : await routed; // a promise only when the router is async
      } catch (error) {
        return this.fail(meta, superstep, toAgentqError(error), nodeName, attempt);
      }
      const outcome =
        next.length > 0
          ? { kind: 'next' as const, tasks: next }
          : { kind: 'completed' as const, output: graph.output(applied.state) };
      const changed = pick(applied.state, applied.changed);
      // Serialised once: for the commit and for the state cache.
      const changedJson: Record<string, string> = {};
      for (const key in changed) changedJson[key] = JSON.stringify(changed[key]);
      // Nodes marked inline that follow run here, each its own commit in the same script (graph.ts).
      const inline =
        next.length === 1 && graph.nodes.get(next[0]!.node)?.inline
          ? await runInlineSteps({
              graph,
              meta,
              superstep: superstep + 1,
              state: applied.state,
              next,
              services: this.options.services,
              logger,
              signal: NEVER,
            })
          : undefined;
      const last = inline && inline.commits.length > 0 ? inline : undefined;
      const after = last ? last.next : next;
      // One script: the fenced commit, the next superstep's job, finishing this job and the next job for
      // this worker (the run's next step by eager dispatch while under AGENTQ_EAGER_HOPS in a row).
      const transition = await transitions.commit(
        {
          runId,
          superstep,
          task,
          mode: 'single',
          step,
          totalTasks: 1,
          outcome,
          state: changed,
          stateJson: changedJson,
          messages,
          memos: hadMemos,
          ...(stepUsage ? { usage: stepUsage } : {}),
        },
        after,
        graphId,
        this.finishing(at, 'committed', after.length === 1),
        meta,
        last?.commits ?? [],
      );
      finished(transition);
      if (transition.commit.kind === 'deadline') return this.pastDeadline(meta, superstep, nodeName, attempt);
      if (transition.commit.kind === 'advanced') {
        // The state at the new cursor, as Redis now holds it: what an eager hop of this run will read.
        const text: StateText = { base: stored.base, changed: { ...stored.changed, ...changedJson } };
        if (last) for (const key of last.changed) text.changed[key] = JSON.stringify(last.state[key]);
        stateCache.set(runId, superstep + 1 + transition.inlined, text);
      } else {
        stateCache.delete(runId);
      }
      logger.debug({ outcome: transition.commit.kind, eager: transition.handed?.eager ?? false }, 'step committed');
      if (ended) this.observe('onNodeEnd', { ...ended, output: result ?? {}, state: Object.freeze(applied.state) });
      return transition.commit.kind === 'fenced' || transition.commit.kind === 'missing' ? 'fenced' : 'committed';
    }
    const transition = await transitions.commit(
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
        memos: hadMemos,
        ...(stepUsage ? { usage: stepUsage } : {}),
      },
      [],
      graphId,
      this.finishing(at, 'committed', false),
      meta,
    );
    finished(transition);
    // A parallel task's state: its own write applied (the siblings' writes are merged by the last one to finish).
    if (ended)
      this.observe('onNodeEnd', {
        ...ended,
        output: result ?? {},
        state: Object.freeze(applyUpdates(graph.channels, state, [update as never]).state),
      });
    if (transition.commit.kind === 'deadline') return this.pastDeadline(meta, superstep, nodeName, attempt);
    if (transition.commit.kind !== 'stored') return 'fenced';
    if (transition.commit.count === tasks.length) await this.advance(meta, graph, graphId);
    return 'committed';
  }

  /** The job a commit's script finishes, and what this worker asks back: the queue's next job, or this run's next step eagerly. */
  private finishing(at: StepJob, returnValue: Outcome, singleNext: boolean): FinishingJob {
    const { job, token, delivery, fetchNext } = at;
    const more = fetchNext();
    return {
      id: job.id!,
      token: token ?? '',
      attempts: job.opts.attempts ?? 1,
      attemptsMade: job.attemptsMade,
      fetchNext: more,
      eager: more && singleNext && delivery.hops < this.options.eagerHops,
      returnValue: JSON.stringify(returnValue),
    };
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
  ): Promise<{ result: NodeResult<Graph['channels']> | void; ended?: StepObservation }> {
    const abort = new StepAbortHandle();
    const release = this.options.activeSteps.add(data.runId, abort);
    const timers: NodeJS.Timeout[] = [];
    if (node.timeoutMs !== undefined) {
      timers.push(
        setTimeout(
          () =>
            abort.abort(new StepAbort('timeout', `node '${node.name}' exceeded its timeout of ${node.timeoutMs} ms`)),
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
    const { store, services, claims, paidClaimMs } = this.options;
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
      ...(claims ? { claims, claimMs } : {}),
    });
    try {
      // Observations are made only while an observer watches nodes (none by default: a step's garbage).
      const observation: StepObservation | undefined = this.watchingNodes()
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
      if (observation) this.observe('onNodeStart', observation);
      const running = Promise.resolve().then(() => node.run(state, context));
      running.catch(() => undefined); // an abandoned node's late failure must not become an unhandled rejection
      try {
        const result = await abort.race(running);
        return {
          result,
          ...(observation ? { ended: { ...observation, endedAt: performance.now(), outcome: 'ok' as const } } : {}),
        };
      } catch (error) {
        if (observation) this.observe('onNodeEnd', { ...observation, endedAt: performance.now(), outcome: 'error' });
        throw error;
      }
    } finally {
      for (const timer of timers) clearTimeout(timer);
      release();
    }
  }

  /** Whether an observer watches node starts or ends now (an observer may set or drop its hooks as it goes). */
  private watchingNodes(): boolean {
    for (const observer of this.options.observers ?? []) if (observer.onNodeStart || observer.onNodeEnd) return true;
    return false;
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
      await store.interrupt(
        runId,
        superstep,
        { node: node.name, stepId: `s${superstep}.t${job.data.task}`, request: thrown.request },
        Date.now(),
      );
      logger.info('step interrupted: the run waits for input');
      return 'waiting';
    }
    // A Redis fault (full, gone) goes up to `process`, which parks the step without spending an attempt.
    if (parksStep(thrown)) throw thrown;
    const abort = thrown instanceof StepAbort ? thrown : undefined;
    if (abort?.kind === 'stale') {
      // Another delivery committed this step while this one ran: nothing to do, no attempt spent.
      logger.info('step committed by another delivery; this one ends without paying again');
      return 'stale';
    }
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
      logger.warn(
        { code: error.code, retryAfterMs: error.retryAfterMs },
        'step parked until the provider allows another request',
      );
      await store.addEvent(runId, 'step-retry', {
        node: node.name,
        superstep,
        attempt,
        parkedMs: error.retryAfterMs,
        error: error.toRecord(),
      });
      await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
      throw new DelayedError();
    }
    // A start job's attempts were set before its node was known: the fewer of the two counts.
    if (
      node.retry.retryOn(error) &&
      attempt < Math.min(node.retry.maxAttempts, job.opts.attempts ?? node.retry.maxAttempts)
    ) {
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
  private async fail(
    meta: StepMeta,
    superstep: number,
    error: AgentqError,
    node: string,
    attempt: number,
  ): Promise<never> {
    await this.options.store.finish(meta.id, 'failed', { ...error.toRecord(), node, attempt }, Date.now(), {
      superstep,
    });
    throw new UnrecoverableError(`${error.code}: ${error.message}`);
  }

  /** The last task of a parallel superstep merges all writes (in task order) and advances; its script adds the next jobs. */
  private async advance(meta: StepMeta, graph: Graph, graphId: string): Promise<void> {
    const { store, transitions, stateCache } = this.options;
    const tasks = meta.tasks ?? [];
    const writes = await store.writes(meta.id);
    if (writes.size < tasks.length) return;
    stateCache.delete(meta.id);
    const stored = await store.state(meta.id);
    const state = stateFrom(graph.channels, stored);
    const ordered = [...writes.entries()].sort(([a], [b]) => a - b).map(([, write]) => write);
    let next: Task[];
    let applied: ReturnType<typeof applyUpdates>;
    try {
      applied = applyUpdates(
        graph.channels,
        state,
        ordered.map((write) => write.update as never),
      );
      next = mergeNextTasks(await Promise.all(ordered.map((write) => graph.next(write.node, applied.state))));
    } catch (error) {
      await this.fail(
        meta,
        meta.superstep,
        toAgentqError(error),
        ordered.map((write) => write.node).join(','),
        1,
      ).catch(() => undefined);
      return;
    }
    const messages: Message[] = ordered.flatMap((write) => write.messages);
    const outcome =
      next.length > 0
        ? { kind: 'next' as const, tasks: next }
        : { kind: 'completed' as const, output: graph.output(applied.state) };
    const merged = await transitions.commit(
      {
        runId: meta.id,
        superstep: meta.superstep,
        task: -1,
        mode: 'advance',
        totalTasks: tasks.length,
        outcome,
        state: pick(applied.state, applied.changed),
        messages,
      },
      outcome.kind === 'next' ? next : [],
      graphId,
      undefined,
      meta,
    );
    if (merged.commit.kind === 'deadline') await this.pastDeadline(meta, meta.superstep, 'advance', 1);
  }

  /**
   * The commit script refused a step that ended past its run's deadline (issue 34: a paused worker
   * committed 5.7 s late): the run fails with DEADLINE, its last commit kept. The job is finished already.
   */
  private async pastDeadline(meta: StepMeta, superstep: number, node: string, attempt: number): Promise<Outcome> {
    const error = new AgentqError(
      'DEADLINE',
      `the run passed its deadline (${new Date(meta.deadlineAt ?? 0).toISOString()}) before node '${node}' could commit; its work was not kept`,
    );
    await this.options.store.finish(meta.id, 'failed', { ...error.toRecord(), node, attempt }, Date.now(), {
      superstep,
    });
    return 'failed';
  }
}

function hasKeys(object: Record<string, unknown>): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return true;
  return false;
}

function pick(state: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, state[key]]));
}
