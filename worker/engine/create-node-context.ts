import { StepAbort } from '../../shared/contracts/abort.js';
import { InterruptSignal } from '../../shared/graph/interrupt-signal.js';
import type {
  ChildRunCall,
  MemoOptions,
  NodeContext,
  PaidCall,
  RunGraphOptions,
  Services,
} from '../../shared/graph/node-context.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import '../../shared/operations/runs/child-runs.js';
import type { StepJobData } from '../../shared/contracts/job-schema.js';
import type { InterruptOptions } from '../../shared/contracts/wait-event.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { RedisRunStore, StepMeta } from '../../shared/store/redis-run-store.js';
import type { Message, StepUsage } from '../../shared/contracts/run-record.js';
import type { StepAbortHandle } from './step-abort.js';
import { createTokenPublisher, type FollowerLook } from './token-publisher.js';
import type { PaidClaims } from './paid-claims.js';
import { StepTimeTravel } from './replay/step-time-travel.js';
import { NodeWaits, type CallbackSigning } from './waits/node-waits.js';
import { interruptCallbackOf } from './waits/interrupt-callback.js';

export interface NodeContextInput {
  store: RedisRunStore;
  services: Services;
  meta: StepMeta;
  data: StepJobData;
  node: string;
  attempt: number;
  /** The step's abort; its signal is made when the node first reads `abortSignal`. */
  abort: StepAbortHandle;
  logger: Logger;
  /** Filled by the node's `recordUsage`; the step commits it. */
  usage: StepUsage;
  /** The step's memos saved by earlier attempts (read with the cursor); `memo` adds to it. */
  memos: Record<string, unknown>;
  /** Claims on paid work: without, `memo` saves without claiming (library contexts, tests). */
  claims?: PaidClaims;
  /** How long a claim of this step holds at most (the node's timeout, else AGENTQ_PAID_CLAIM_MS). */
  claimMs?: number;
  /**
   * The run's history length as this step's begin knew it (a start job's admission: the seed of a
   * conversation, else 0): nothing is read for messages past it, since only a commit adds messages and
   * this step is not committed. @default unknown (read)
   */
  historyLength?: number;
  /** The run's whole history as the run store keeps it (JSON texts), when the worker knows it: read from here. */
  history?: readonly string[];
  /** What `context.callback` signs its URLs with. @default none: it fails, naming AGENTQ_CALLBACK_SECRET */
  callbacks?: CallbackSigning;
}

/** What a node gets besides the state (NodeContext), for one attempt of one step. */
export function createNodeContext(input: NodeContextInput): NodeContext {
  return new StepNodeContext(input);
}

/**
 * A class, not an object literal: a step builds one per attempt, and the literal's six closures and
 * token publisher were a sizeable share of a step's garbage (a trivial node reads none of them). The
 * function members are getters that make their closure when read, so `const { memo } = ctx` still works.
 */
class StepNodeContext implements NodeContext {
  readonly runId: string;
  readonly tenant: string;
  readonly graph: string;
  readonly conversationId?: string;
  readonly stepIndex: number;
  readonly task: number;
  readonly stepId: string;
  readonly node: string;
  readonly attempt: number;
  readonly logger: Logger;
  readonly services: Services;
  readonly tokenBudgetRemaining: number | null;
  private publisher: ((text: string, call: string) => void) | undefined;
  /** Whether the run's tokens were followed at the last paid call's claim: its publisher need not look again. */
  private followerLook: FollowerLook | undefined;
  /** The last paid call was answered from a replay's recording: the usage recorded after it is not this run's. */
  private replayed = false;

  constructor(private readonly input: NodeContextInput) {
    const { meta, data } = input;
    this.runId = data.runId;
    this.tenant = meta.tenant;
    this.graph = meta.graph;
    if (meta.conversationId !== null) this.conversationId = meta.conversationId;
    this.stepIndex = data.superstep;
    this.task = data.task;
    this.stepId = `s${data.superstep}.t${data.task}`;
    this.node = input.node;
    this.attempt = input.attempt;
    this.logger = input.logger;
    this.services = input.services;
    this.tokenBudgetRemaining =
      meta.tokenBudget === null
        ? null
        : Math.max(0, meta.tokenBudget - meta.usage.inputTokens - meta.usage.outputTokens);
  }

  get arg(): unknown {
    return this.input.meta.tasks?.[this.input.data.task]?.arg;
  }

  get abortSignal(): AbortSignal {
    return this.input.abort.signal;
  }

  get history(): NodeContext['history'] {
    const { store, data, historyLength, history } = this.input;
    return async (options) => {
      const from = options?.from ?? 0;
      // Parsed from the texts, as a read would: the step gets its own copies, the same values.
      if (history) return history.slice(Math.max(0, from)).map((text) => JSON.parse(text) as Message);
      if (historyLength !== undefined && from >= historyLength) return [];
      return store.reads.messages(data.runId, from);
    };
  }

  get interrupt(): NodeContext['interrupt'] {
    const { meta, callbacks } = this.input;
    const stepId = this.stepId;
    return <T>(request: unknown, options?: InterruptOptions): T =>
      resumeOrInterrupt<T>(meta.resume, stepId, request, interruptCallbackOf(options, callbacks));
  }

  get memo(): NodeContext['memo'] {
    const { meta, memos } = this.input;
    // Time travel: a replay answers from its original's recording; a recording run keeps each call.
    const travel = new StepTimeTravel(this.input, this.stepId);
    return async <T>(key: string, compute: (paid?: PaidCall) => Promise<T>, options?: MemoOptions): Promise<T> => {
      this.replayed = false;
      if (key in memos) return travel.record(key, options, memos[key] as T);
      if (meta.replay) {
        const answer = await travel.replay(key, options);
        if (answer.kind === 'recorded') {
          memos[key] = answer.value;
          this.replayed = true;
          return answer.value as T;
        }
      }
      // The recording rides with the save of a fresh result (one script); a result saved earlier is recorded here.
      const value = await this.paidMemo(key, compute, travel, options);
      return travel.record(key, options, value);
    };
  }

  /**
   * `memo` past a replay's answer: the step's saved result, or `compute` paid for once under a claim,
   * saved with its recording (`travel`, when the run records `full`) in one script.
   */
  private async paidMemo<T>(
    key: string,
    compute: (paid?: PaidCall) => Promise<T>,
    travel: StepTimeTravel,
    options: MemoOptions | undefined,
  ): Promise<T> {
    const { store, data, attempt, abort, memos, claims, claimMs = 600_000 } = this.input;
    const stepId = this.stepId;
    if (!claims) {
      const value = await compute();
      memos[key] = value ?? null;
      // Refused once the run has ended (a late save): the step stops, as a stale delivery.
      if (!(await store.commits.memoPut(data.runId, stepId, memos)))
        throw new StepAbort('stale', `run ${data.runId} ended before step ${stepId} saved its paid result`);
      return value;
    }
    // Claimed with the read of the saved results: a second delivery of this step waits for this call.
    const claim = await claims.acquire({
      runId: data.runId,
      superstep: data.superstep,
      task: data.task,
      key,
      attempt,
      endsAt: Date.now() + claimMs,
      signal: abort.signal,
      onlyTask: this.input.meta.tasks?.length === 1,
    });
    if (claim.kind === 'stale')
      throw new StepAbort('stale', `step ${stepId} of run ${data.runId} was committed by another delivery`);
    if (claim.kind === 'memo') {
      memos[key] = claim.value;
      return claim.value as T;
    }
    if (claim.followed !== undefined && claim.lookedAt !== undefined)
      this.followerLook = { followed: claim.followed, at: claim.lookedAt };
    let value: T;
    try {
      // The last look before the request leaves: the claim still this call's, the cursor still here.
      value = await compute({ confirm: () => claims.confirm(data.runId, data.superstep, data.task, claim) });
    } catch (error) {
      await claims.release(data.runId, claim).catch(() => undefined);
      throw error;
    }
    memos[key] = value ?? null;
    // A refused save keeps the result in memory for this process's next attempt.
    const record = travel.recordArgs(key, options, value);
    travel.recordedAs(key, await claims.save(data.runId, stepId, memos, claim, key, record));
    return value;
  }

  get recordUsage(): NodeContext['recordUsage'] {
    const { usage } = this.input;
    // A replay's answer from the recording cost nothing: its usage was the original's.
    return (recorded) => addStepUsage(usage, recorded, { replayed: this.replayed });
  }

  /**
   * One publisher per attempt (it numbers the attempt's tokens), made at the first piece of text rather
   * than when read: a model call reads this before its request, and a publisher made then (its closures,
   * its held events) lived through the whole wait for the answer, long enough to be promoted out of the
   * young generation at 100 steps in flight.
   */
  get streamText(): (text: string, call: string) => void {
    return (this.streamer ??= (text, call) => this.tokenPublisher()(text, call));
  }

  private streamer: ((text: string, call: string) => void) | undefined;

  private tokenPublisher(): (text: string, call: string) => void {
    const { store, data, node, attempt } = this.input;
    return (this.publisher ??= createTokenPublisher({
      log: store.tokenLog,
      runId: data.runId,
      step: data.superstep,
      task: data.task,
      node,
      attempt,
      lastLook: () => this.followerLook,
    }));
  }

  /** The step's durable waits, made when the node first sleeps or waits (one per attempt: it ranks them). */
  private waits: NodeWaits | undefined;

  get sleep(): NodeContext['sleep'] {
    return this.nodeWaits().sleep;
  }

  get waitFor(): NodeContext['waitFor'] {
    return this.nodeWaits().waitFor;
  }

  get callback(): NodeContext['callback'] {
    return this.nodeWaits().callback;
  }

  private nodeWaits(): NodeWaits {
    const { runId, tenant, stepId } = this;
    const { store, callbacks } = this.input;
    return (this.waits ??= new NodeWaits({ store, runId, tenant, stepId, ...(callbacks ? { callbacks } : {}) }));
  }

  /** How many children this attempt asked for so far: a child without a key is named by its place. */
  private childCalls = 0;

  get runGraph(): NodeContext['runGraph'] {
    return (async (graph: string, input: unknown, options: RunGraphOptions = {}) => {
      const [outcome] = await this.startChildren([{ graph, input, ...options }], options.wait !== false);
      return outcome;
    }) as NodeContext['runGraph'];
  }

  get runGraphs(): NodeContext['runGraphs'] {
    return ((calls: readonly ChildRunCall[], options: { wait?: boolean } = {}) =>
      this.startChildren(calls, options.wait !== false)) as NodeContext['runGraphs'];
  }

  private async startChildren(calls: readonly ChildRunCall[], wait: boolean): Promise<unknown[]> {
    const childRuns = this.services.childRuns;
    if (!childRuns)
      throw new AgentqError('INTERNAL', 'this context cannot start child runs (no childRuns service: not a worker)');
    const first = this.childCalls;
    this.childCalls += calls.length;
    const requests = calls.map(({ graph, input, idempotencyKey, graphVersion }, index) => ({
      graph,
      input,
      key: idempotencyKey === undefined ? String(first + index) : `k:${idempotencyKey}`,
      ...(graphVersion === undefined ? {} : { graphVersion }),
    }));
    return childRuns.start({ runId: this.runId, tenant: this.tenant, stepId: this.stepId }, requests, wait);
  }

  get emit(): NodeContext['emit'] {
    const { store, data, node } = this.input;
    return (type, eventData) =>
      store.eventLog
        .addEvent(data.runId, type, { ...eventData, node, superstep: data.superstep, task: data.task })
        .then(() => undefined);
  }
}

/**
 * `interrupt` at step `stepId`: the answer when the run was resumed at this step, else the signal that
 * makes the run wait for one.
 */
export function resumeOrInterrupt<T>(
  resume: { stepId: string; value: unknown } | null | undefined,
  stepId: string,
  request: unknown,
  callback?: { timeoutMs: number },
): T {
  if (resume?.stepId === stepId) return resume.value as T;
  throw new InterruptSignal(request, callback);
}

/** `recordUsage`: adds a response's usage to the step's; a replayed answer only sets the finish reason. */
export function addStepUsage(usage: StepUsage, recorded: StepUsage, { replayed = false } = {}): void {
  const { inputTokens, outputTokens, costUsd, model, finishReason } = recorded;
  // The step's last response's: what the run's result reports.
  if (finishReason) usage.finishReason = finishReason;
  if (replayed) return;
  usage.inputTokens += inputTokens;
  usage.outputTokens += outputTokens;
  usage.costUsd += costUsd;
  const cached = recorded.cachedInputTokens ?? 0;
  if (cached > 0) usage.cachedInputTokens = (usage.cachedInputTokens ?? 0) + cached;
  // A usage recorded without it (an embedding, say) read nothing from a cache: its cost is the uncached cost.
  const uncached = recorded.uncachedCostUsd ?? costUsd;
  if (uncached > 0) usage.uncachedCostUsd = (usage.uncachedCostUsd ?? 0) + uncached;
  if (model) usage.model = model;
}
