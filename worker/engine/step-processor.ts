import { DelayedError, type Job } from 'bullmq';
import { AgentqError, toAgentqError } from '../../shared/contracts/errors.js';
import { applyUpdates, stateFrom } from '../../shared/graph/channels.js';
import type { CompiledNode, Graph, NodeResult } from '../../shared/graph/graph.js';
import { graphIdOf, START_NODE, type StepJobData } from '../../shared/contracts/job-schema.js';
import { lazyChild } from '../../shared/telemetry/logger.js';
import { parseStateText, type StateText, type StepMeta } from '../../shared/store/redis-run-store.js';
import { CANCELLED_ERROR as CANCELLED } from '../../shared/store/run-scripts.js';
import type { StepUsage } from '../../shared/contracts/run-record.js';
import type { StepObservation } from '../../shared/graph/step-observer.js';
import type { StepDelivery, StepResult } from './step-worker.js';
import type { FinishingJob } from './step-transitions.js';
import { runInlineSteps } from './inline-steps.js';
import { advanceSuperstep, pick } from './advance-superstep.js';
import { executeNode } from './execute-node.js';
import { observeStep } from './observe-step.js';
import { failRun, handleStepFailure } from './step-failure.js';
import type { StepOutcome, StepProcessorOptions } from './step-processor-options.js';
import { inStepSpan } from './step-span.js';
import type { ExecutedStep, StepAttempt, StepJob } from './step-attempt.js';
import { parkOnRedisFault, parksStep } from './redis-fault-park.js';
import { failPastDeadline } from './fail-past-deadline.js';
import { stepLimitError } from './step-limits.js';
import { superstepOutcome, superstepTransition, type SuperstepTransition } from './superstep-transition.js';

export type { StepProcessorOptions } from './step-processor-options.js';

/** Inline steps are short pure functions: nothing aborts them (a shutdown waits for the job as for any). */
const NEVER = new AbortController().signal;

/** How long a step for a graph version this worker lacks waits before another worker may take it. */
const DEFER_MS = 1000; // short, so a run left for the worker that has its graph is not held up long

/**
 * Runs one step job (docs/concepts/step-engine.md: engine v2): its cursor comes with it (or is read first); run the
 * node with an AbortSignal; then one script commits, fenced, adds the next superstep's jobs and finishes this job
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
      // A Redis fault is not the step's failure: parked, no attempt spent.
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
  ): Promise<StepOutcome> {
    const { store, stateCache } = this.options;
    const { job, token } = at;
    const { runId, superstep, task } = job.data;
    const attempt = job.attemptsMade + 1;
    const begin =
      delivered ??
      (await store.commits.begin(
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
        // A start job (docs/concepts/step-engine.md): take the run in, then run its first task here. Only a job that
        // has not taken the run in yet gets here (a second 'admit' would mean the intake was refused).
        const admission = node === START_NODE ? await this.options.admitStart(begin.meta, job, token) : null;
        const entry = admission?.tasks[task]?.node;
        if (!entry) return 'stale';
        // Taken in now: the admission began the task too. Taken in by someone else: BEGIN decides.
        const { started, historyLength } = admission;
        return started
          ? this.run({
              at,
              nodeName: entry,
              meta: started.meta,
              // A run taken in with no history (no conversation's seed): its steps here read none.
              stored: await this.stateOf(runId, started.meta.superstep, started.state, historyLength ? undefined : []),
              memos: started.memos,
              attempt,
              finished,
              historyLength,
            })
          : this.step(at, entry, undefined, finished);
      }
      case 'written': {
        const meta = await store.reads.get(runId);
        const graph = meta && this.graphOf(meta);
        if (meta && graph) await advanceSuperstep(this.options, meta, graph, graphIdOf(meta));
        return 'written';
      }
      case 'cancel':
        await store.lifecycle.finish(runId, 'cancelled', CANCELLED, Date.now(), { onlyFrom: 'cancelling' });
        return 'cancelled';
      case 'run':
        // The run's cursor names the task's node (a start job's own data says START_NODE).
        return this.run({
          at,
          nodeName: begin.meta.tasks?.[task]?.node ?? node,
          meta: begin.meta,
          stored: await this.stateOf(runId, begin.meta.superstep, begin.state),
          memos: begin.memos,
          attempt,
          finished,
        });
    }
  }

  /** The run's state at `superstep` (StateCache.stateOf): sent by BEGIN, cached, or read. */
  private stateOf(runId: string, superstep: number, sent: StateText | null, history?: readonly string[]) {
    return this.options.stateCache.stateOf(
      runId,
      superstep,
      sent,
      () => this.options.store.reads.state(runId),
      history,
    );
  }

  private graphOf(meta: StepMeta): Graph | undefined {
    return this.options.registry.find(meta.graph, meta.graphVersion);
  }

  /** The step inside its span `agent.step <node>`, a child of the run's root span (docs/guides/observability.md). */
  private run(current: StepAttempt): Promise<StepOutcome> {
    const { telemetry } = this.options;
    if (!telemetry.enabled) return this.runStep(current);
    return inStepSpan(telemetry, current.at.job, current.nodeName, current.meta, current.attempt, () =>
      this.runStep(current),
    );
  }

  /** Runs the node, then commits what it returned: the superstep's one task, or one of its parallel tasks. */
  private async runStep(current: StepAttempt): Promise<StepOutcome> {
    const { at, nodeName, meta, stored, memos, attempt, historyLength } = current;
    const { job, token } = at;
    const { runId, superstep, task } = job.data;
    const history = this.options.stateCache.historyOf(runId, superstep);
    const now = Date.now();
    const { graph, node } = await this.runnable(current, now);
    const state = stateFrom(graph.channels, parseStateText(stored));
    const logger = lazyChild(this.options.logger, { runId, stepIndex: superstep, task, node: nodeName, attempt });
    const startedAt = new Date(now).toISOString();
    let result: NodeResult<typeof graph.channels> | void;
    let ended: StepObservation | undefined; // onNodeEnd's observation (when an observer watches nodes), told after the commit (with the state it made)
    const usage: StepUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    try {
      const execution = { node, state, meta, data: job.data, attempt, logger, usage, memos, historyLength, history };
      ({ result, ended } = await executeNode(this.options, execution));
    } catch (error) {
      return handleStepFailure(this.options, { job, token, meta, node, attempt, thrown: error, logger, usage });
    }
    const stepUsage = usage.inputTokens + usage.outputTokens > 0 ? usage : undefined;
    const { messages = [], ...update } = (result ?? {}) as NodeResult<typeof graph.channels>;
    const done: ExecutedStep = {
      graph,
      state,
      update,
      messages,
      output: result ?? {},
      ended,
      logger,
      step: {
        superstep,
        task,
        node: nodeName,
        attempts: attempt,
        startedAt,
        endedAt: new Date().toISOString(),
        ...(stepUsage ? { usage: stepUsage } : {}),
      },
      stepUsage,
      // The node context adds what it saves to `memos`: empty, the step has no memo field to drop.
      hadMemos: hasKeys(memos),
    };
    return (meta.tasks ?? []).length === 1 ? this.commitSingle(current, done) : this.commitTask(current, done);
  }

  /**
   * The graph and node of the step, when this worker may run it. A graph version it lacks defers the job
   * (DelayedError); a node the graph lacks, or a step past the run's limits, fails the run.
   */
  private async runnable(current: StepAttempt, now: number): Promise<{ graph: Graph; node: CompiledNode }> {
    const { at, nodeName, meta, attempt } = current;
    const { runId, superstep, task } = at.job.data;
    const graph = this.graphOf(meta);
    if (!graph) {
      // Never run a step of a graph version this worker lacks: leave it for a worker that has it.
      await this.options.store.eventLog.addEvent(runId, 'step-deferred', {
        node: nodeName,
        superstep,
        reason: `this worker lacks graph ${meta.graph}@${meta.graphVersion ?? 'latest'}; it has ${this.options.registry.ids().join(', ') || 'none'}`,
      });
      await at.job.moveToDelayed(Date.now() + DEFER_MS, at.token);
      throw new DelayedError();
    }
    const node = graph.nodes.get(nodeName);
    if (!node || !meta.tasks?.[task]) {
      return failRun(
        this.options.store,
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
    const limit = stepLimitError(meta, nodeName, now);
    if (limit) return failRun(this.options.store, meta, superstep, limit, nodeName, attempt);
    return { graph, node };
  }

  /** The superstep's only task: route, run the inline nodes that follow, and commit all in one script. */
  private async commitSingle(current: StepAttempt, done: ExecutedStep): Promise<StepOutcome> {
    const { at, nodeName, meta, stored, attempt, finished } = current;
    const { graph, state, update, messages, logger, step, stepUsage } = done;
    const { runId, superstep, task } = at.job.data;
    const { transitions, stateCache } = this.options;
    let moved: SuperstepTransition;
    try {
      const routed = superstepTransition(graph, state, [{ node: nodeName, update }]);
      moved = 'then' in routed ? await routed : routed; // a promise only when the router is async
    } catch (error) {
      return failRun(this.options.store, meta, superstep, toAgentqError(error), nodeName, attempt);
    }
    const { applied, next } = moved;
    const outcome = superstepOutcome(graph, moved);
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
    // One script: the fenced commit, the next superstep's job, finishing this job and the next job for this worker
    // (the run's next step by eager dispatch under AGENTQ_EAGER_HOPS in a row; a batch's next question: EagerStarts).
    const job = this.finishing(at, 'committed', after.length === 1);
    const offered = this.options.eagerStarts?.offer(runId, job, after.length === 0);
    const committed = transitions.commit(
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
        memos: done.hadMemos,
        ...(stepUsage ? { usage: stepUsage } : {}),
      },
      after,
      graphIdOf(meta),
      job,
      meta,
      { inline: last?.commits ?? [] },
    );
    const transition = await (offered ? offered(committed) : committed);
    finished(transition);
    if (transition.commit.kind === 'deadline')
      return failPastDeadline(this.options.store, meta, superstep, nodeName, attempt);
    if (transition.commit.kind === 'advanced') {
      // The state at the new cursor, as Redis now holds it: what an eager hop of this run will read.
      const text: StateText = { base: stored.base, changed: { ...stored.changed, ...changedJson } };
      if (last) for (const key of last.changed) text.changed[key] = JSON.stringify(last.state[key]);
      const before = stateCache.historyOf(runId, superstep);
      const added = [messages, ...(last?.commits.map((commit) => commit.request.messages) ?? [])].flat();
      const history = before && [...before, ...added.map((message) => JSON.stringify(message))];
      stateCache.set(runId, superstep + 1 + transition.inlined, text, history);
    } else {
      stateCache.delete(runId);
    }
    logger.debug({ outcome: transition.commit.kind, eager: transition.handed?.eager ?? false }, 'step committed');
    if (done.ended)
      observeStep(this.options.observers, 'onNodeEnd', {
        ...done.ended,
        output: done.output,
        state: Object.freeze(applied.state),
      });
    return transition.commit.kind === 'fenced' || transition.commit.kind === 'missing' ? 'fenced' : 'committed';
  }

  /** One of a superstep's parallel tasks: its write is stored; the last task to finish advances the run. */
  private async commitTask(current: StepAttempt, done: ExecutedStep): Promise<StepOutcome> {
    const { at, nodeName, meta, attempt, finished } = current;
    const { graph, state, update, messages, step, stepUsage } = done;
    const { runId, superstep, task } = at.job.data;
    const tasks = meta.tasks ?? [];
    const graphId = graphIdOf(meta);
    const transition = await this.options.transitions.commit(
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
        memos: done.hadMemos,
        ...(stepUsage ? { usage: stepUsage } : {}),
      },
      [],
      graphId,
      this.finishing(at, 'committed', false),
      meta,
    );
    finished(transition);
    // A parallel task's state: its own write applied (the siblings' writes are merged by the last one to finish).
    if (done.ended)
      observeStep(this.options.observers, 'onNodeEnd', {
        ...done.ended,
        output: done.output,
        state: Object.freeze(applyUpdates(graph.channels, state, [update as never]).state),
      });
    if (transition.commit.kind === 'deadline')
      return failPastDeadline(this.options.store, meta, superstep, nodeName, attempt);
    if (transition.commit.kind !== 'stored') return 'fenced';
    if (transition.commit.count === tasks.length) await advanceSuperstep(this.options, meta, graph, graphId);
    return 'committed';
  }

  /** The job a commit's script finishes, and what this worker asks back: the queue's next job, or this run's next step eagerly. */
  private finishing(at: StepJob, returnValue: StepOutcome, singleNext: boolean): FinishingJob {
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
}

function hasKeys(object: Record<string, unknown>): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return true;
  return false;
}
