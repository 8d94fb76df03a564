import { TenantAdmission, type TenantAdmissionConfig } from '../../shared/operations/runs/tenant-admission.js';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { Config } from '../../shared/config/config.js';
import { TenantPolicy } from '../../shared/config/tenant-policy.js';
import { pinGuardrailsInState } from '../../shared/config/tenant-policy-check.js';
import { AgentqError, toAgentqError } from '../../shared/contracts/errors.js';
import type { GraphRegistry } from '../../shared/graph/graph-registry.js';
import { ID_PATTERN } from '../../shared/contracts/ids.js';
import { GraphRollouts } from '../../shared/store/rollouts/graph-rollouts.js';
import { enqueueGatedJob, rawJobRunId } from './gated-intake.js';
import { enterGraph } from '../../shared/graph/ready-gate.js';
import {
  runRequestProblem,
  formatZodError,
  runJobSchema,
  storedRunJobSchema,
  type StepJobData,
} from '../../shared/contracts/job-schema.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { ConversationHistory } from '../runtime/memory/conversation-history.js';
import { ConversationTurns } from '../../shared/store/conversation-turns.js';
import { ConcurrencyKeys } from '../../shared/store/slots/concurrency-keys.js';
import { passRunGates } from './run-gates.js';
import { MEMORY_STATE_KEY, memoryKeepOf } from '../runtime/memory/memory-state.js';
import { isTerminal, type Message } from '../../shared/contracts/run-record.js';
import type { Task } from '../../shared/graph/graph.js';
import type { BeginResult, RedisRunStore, RunMeta } from '../../shared/store/redis-run-store.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import { stepJobRun, type StepJobs } from './step-jobs.js';
import type { ServedGraphs } from '../../shared/store/served-graphs.js';
import { unservedGraphVerdict } from './unserved-graph-verdict.js';
import { oversizedJobOf } from '../../shared/bullmq/oversized-job-data.js';
import { failRefusedRawJob, oversizedMessage } from './refused-raw-job.js';
import { redisFaultOf } from '../../shared/redis/redis-fault.js';

/** The top-level fields of a raw job read (unparsed) from one over AGENTQ_MAX_JOB_BYTES, to name its run. */
export const OVERSIZED_JOB_FIELDS = ['runId', 'idempotencyKey', 'tenant', 'graph'] as const;

/** What a start job learns when it takes its run in (IntakeProcessor.admitStart). */
export interface StartAdmission {
  /** The run's tasks of superstep 0. */
  tasks: Task[];
  /** The start job's own task, begun by the admission (as BEGIN's 'run'); absent when taken in before. */
  started?: Extract<BeginResult, { kind: 'run' }>;
  /** With `started`: the run's history as the admission left it (a conversation's seed, else none). */
  historyLength?: number;
}

/**
 * What `admit` did: `result` 'ok' (taken in now), 'admitted' (by a concurrent attempt), 'kicked' (taken
 * in before), 'deferred' or the run's status. Once the input passed, the entry tasks; and a start job's
 * task, begun, when the run was taken in now.
 */
interface Admitted extends Partial<StartAdmission> {
  result: string;
}

interface IntakeProcessorOptions {
  store: RedisRunStore;
  registry: GraphRegistry;
  stepJobs: StepJobs;
  config: Pick<Config, 'tenant' | 'defaultMaxSteps' | 'defaultDeadlineMs' | 'unservedGraphWaitMs'> &
    Partial<TenantAdmissionConfig> &
    Partial<Pick<Config, 'redisFaultDelayMs' | 'tenantPolicy'>>;
  logger: Logger;
  telemetry: Telemetry;
  /** The graphs live workers serve: a run this worker cannot serve is left for them, not failed. */
  served: ServedGraphs;
}

/**
 * Takes runs in from the intake queue `agentq-runs`: raw jobs of schema v1 added by other services,
 * and the id-only jobs our client adds after writing the run record. Validates (envelope, graph,
 * input), writes the initial state and adds the first step jobs. An invalid job fails its run at the
 * first attempt, with the reason on the run, and nothing else happens (bad input
 * stops at the door: no model call).
 *
 * The same job, sent again for a run already admitted, only makes sure the current step jobs exist —
 * that is how `retry` and the reconciler hand a run back to the workers.
 */
export class IntakeProcessor {
  private readonly conversations: ConversationHistory;
  private readonly turns: ConversationTurns;
  private readonly concurrencyKeys: ConcurrencyKeys;
  private readonly admission: TenantAdmission;
  private readonly rollouts: GraphRollouts;
  /** The operator's policy: only its pinned guardrails matter here (the API checks the rest). */
  private readonly policy: TenantPolicy;

  constructor(private readonly options: IntakeProcessorOptions) {
    this.policy = TenantPolicy.fromConfig(options.config, true);
    this.conversations = new ConversationHistory(options.store);
    this.turns = new ConversationTurns(options.store.redis, options.store.keys, options.store.retentionSeconds * 2);
    this.concurrencyKeys = new ConcurrencyKeys(
      options.store.redis,
      options.store.keys,
      options.store.retentionSeconds * 2,
    );
    this.admission = new TenantAdmission(options.store.redis, options.store.keys, options.config);
    this.rollouts = new GraphRollouts({ redis: options.store.redis, keys: options.store.keys });
  }

  process = async (job: Job, token?: string): Promise<string> => {
    try {
      // A debounced or throttled run starts later, from a delayed start job of its own.
      const gated = await enqueueGatedJob(job, {
        store: this.options.store,
        stepQueues: this.options.stepJobs.queues,
        config: this.options.config,
      });
      if (gated !== undefined) return 'deferred';
      const meta = await this.runOf(job, token);
      return (await this.admit(meta, job, token)).result;
    } catch (error) {
      // Redis full or gone is not the job's fault: try again later, spending no attempt (a raw
      // job's producer may have given it one only).
      if (!redisFaultOf(error)) throw error;
      this.options.logger.debug({ jobId: job.id, err: String(error) }, 'intake job parked: Redis fault');
      await job
        .moveToDelayed(Date.now() + (this.options.config.redisFaultDelayMs ?? 1000), token)
        .catch(() => undefined);
      throw new DelayedError();
    }
  };

  private async runOf(job: Job, token?: string): Promise<RunMeta> {
    const { store, config } = this.options;
    const stored = storedRunJobSchema.safeParse(job.data);
    if (stored.success) {
      const meta = await store.reads.get(stored.data.runId);
      if (!meta)
        throw new UnrecoverableError(
          `run ${stored.data.runId} not found: it expired or was purged before a worker took it in`,
        );
      return meta;
    }
    const oversized = oversizedJobOf(job.data);
    const schemaParsed = oversized ? undefined : runJobSchema.safeParse(job.data);
    const problem = schemaParsed?.success ? runRequestProblem(schemaParsed.data) : undefined;
    const parsed = problem ? undefined : schemaParsed;
    const raw = (
      oversized ? oversized.fields : typeof job.data === 'object' && job.data !== null ? job.data : {}
    ) as Record<string, unknown>;
    const tenant = typeof raw.tenant === 'string' && ID_PATTERN.test(raw.tenant) ? raw.tenant : config.tenant;
    const runId = rawJobRunId(job, raw, tenant);
    const now = Date.now();
    if (!parsed?.success) {
      const message = oversized
        ? oversizedMessage(job, oversized)
        : `invalid job for queue ${job.queueName} (job schema v1): ${problem ?? formatZodError(parsed!.error)}`;
      const graph = typeof raw.graph === 'string' ? raw.graph : '(invalid)';
      const details = oversized ? { bytes: oversized.bytes, limitBytes: oversized.limitBytes } : undefined;
      const error = { code: 'INVALID_INPUT' as const, message, retryable: false, ...(details ? { details } : {}) };
      await failRefusedRawJob({ store, runId, tenant, graph, maxSteps: config.defaultMaxSteps, error, now });
      // The failed job keeps the stand-in, not the data: Bull Board and the failed set stay small.
      if (oversized) await job.updateData(job.data);
      throw new UnrecoverableError(message);
    }
    const data = parsed.data;
    // The same admission as every other way in (TenantAdmission): in-flight cap, storage budget, fair share.
    let admission;
    try {
      admission = await this.admission.admit({
        tenant,
        runId,
        origin: 'raw-job',
        priority: data.priority ?? 0,
        bytes: Buffer.byteLength(JSON.stringify(data.input ?? null)),
        now,
      });
    } catch (error) {
      const existing = await store.reads.get(runId);
      if (existing?.tenant === tenant) return existing; // a job delivered again finds its run
      const refusal = toAgentqError(error);
      if (refusal.code === 'RATE_LIMITED' && token) {
        // The tenant is at its in-flight cap: the job waits for a slot without spending an attempt.
        await job.moveToDelayed(Date.now() + (refusal.retryAfterMs ?? 2000), token);
        throw new DelayedError();
      }
      if (refusal.code !== 'STORAGE_BUDGET_EXCEEDED') throw error;
      // Refused for good: the run is failed with the reason (no input kept), as an invalid job's is.
      await failRefusedRawJob({
        store,
        runId,
        tenant,
        graph: data.graph,
        maxSteps: config.defaultMaxSteps,
        error: refusal.toRecord(),
        now,
      });
      throw new UnrecoverableError(`${refusal.code}: ${refusal.message}`);
    }
    const deadlineMs = data.options?.deadlineMs ?? config.defaultDeadlineMs;
    const { priority } = admission;
    // A version the job names wins; else the graph's rollout picks one by the run id, as for every run.
    const graphVersion = data.graphVersion ?? (await this.rollouts.versionFor(data.graph, runId));
    let created: boolean;
    let meta: RunMeta;
    try {
      ({ meta, created } = await store.creation.create({
        id: runId,
        tenant,
        graph: data.graph,
        ...(graphVersion === undefined ? {} : { graphVersion }),
        input: data.input,
        maxSteps: data.options?.maxSteps ?? config.defaultMaxSteps,
        ...(deadlineMs > 0 ? { deadlineAt: now + deadlineMs } : {}),
        ...(data.options?.tokenBudget ? { tokenBudget: data.options.tokenBudget } : {}),
        ...(data.idempotencyKey === undefined ? {} : { idempotencyKey: data.idempotencyKey }),
        ...(data.conversationId === undefined ? {} : { conversationId: data.conversationId }),
        ...(data.onBusy === undefined ? {} : { onBusy: data.onBusy }),
        ...(data.concurrency === undefined ? {} : { concurrency: data.concurrency }),
        ...(data.webhookUrl === undefined ? {} : { webhookUrl: data.webhookUrl }),
        ...(priority > 0 ? { priority } : {}),
        now,
      }));
    } catch (error) {
      await admission.undo();
      throw error;
    }
    if (!created && (meta.tenant !== tenant || isTerminal(meta.status))) await admission.undo();
    return meta;
  }

  /** Takes a run in without an intake job (RunEnqueuer's `admitInline`): → false when this worker lacks the graph. */
  admitInline = async (meta: RunMeta): Promise<boolean> => {
    if (!this.options.registry.find(meta.graph, meta.graphVersion)) return false;
    try {
      await this.admit(meta);
    } catch (error) {
      // Rejected: the run is failed with its reason, as the intake job would have left it.
      if (!(error instanceof UnrecoverableError)) throw error;
    }
    return true;
  };

  /**
   * Takes a run in from its start job (a step job, docs/concepts/step-engine.md), which then runs the first task
   * itself: only the other entry tasks get jobs here. Rejections fail the run and throw as for an intake job.
   * → the run's tasks of superstep 0 when it is taken in (now or before), or null when it is not; and
   * when it was taken in now, the job's task already begun (as BEGIN's 'run': no second BEGIN).
   */
  admitStart = async (meta: RunMeta, job: Job<StepJobData>, token?: string): Promise<StartAdmission | null> => {
    const {
      result,
      tasks: taken,
      started,
      historyLength,
    } = await this.admit(meta, job, token, { task: job.data.task, attempt: job.attemptsMade + 1 });
    if (result === 'ok') return taken ? { tasks: taken, started, historyLength } : null;
    if (result !== 'admitted' && result !== 'kicked') return null;
    const tasks = (await this.options.store.reads.get(meta.id))?.tasks;
    return tasks ? { tasks } : null;
  };

  /** `own`, a start job's task: only the other entry tasks get jobs, and that one is begun. */
  private async admit(
    meta: RunMeta,
    job?: Job,
    token?: string,
    own?: { task: number; attempt: number },
  ): Promise<Admitted> {
    const { store, registry, stepJobs, logger } = this.options;
    if (meta.tasks !== null) {
      if (meta.status === 'running' || meta.status === 'queued' || meta.status === 'cancelling') {
        const done = new Set((await store.commits.writes(meta.id)).keys());
        await stepJobs.ensure(stepJobRun(meta), meta.superstep, meta.tasks, done);
      }
      return { result: 'kicked' };
    }
    if (meta.status !== 'queued') return { result: meta.status };
    const reject = async (error: AgentqError): Promise<never> => {
      await store.lifecycle.finish(meta.id, 'failed', error.toRecord(), Date.now(), { onlyFrom: 'queued' });
      throw new UnrecoverableError(`${error.code}: ${error.message}`);
    };
    const graph = registry.find(meta.graph, meta.graphVersion);
    if (!graph) {
      // A graph this worker lacks — an unknown name or an unserved version of a known one
      // (`chain@9`) — is left for a live worker that serves it, and fails only when none appears in time.
      const verdict = await unservedGraphVerdict({
        meta,
        registry,
        served: this.options.served,
        waitMs: this.options.config.unservedGraphWaitMs,
      });
      if (verdict.kind === 'fail') return reject(verdict.error);
      if (!job) return { result: 'deferred' };
      await store.eventLog.addEvent(meta.id, 'step-deferred', { reason: verdict.reason });
      await job.moveToDelayed(Date.now() + verdict.delayMs, token);
      throw new DelayedError();
    }
    const input = graph.inputSchema.safeParse(meta.input);
    if (!input.success) {
      return reject(
        new AgentqError(
          'INVALID_INPUT',
          `invalid input for graph ${graph.id}: ${formatZodError(input.error, 'input')}`,
        ),
      );
    }
    let state: Record<string, unknown>;
    let tasks;
    try {
      state = pinGuardrailsInState(graph.initialState(input.data), this.policy.rulesFor(meta.tenant));
      ({ state, tasks } = await enterGraph(graph, state)); // waiting entry tasks stay in the state
    } catch (error) {
      return reject(toAgentqError(error));
    }
    if (tasks.length === 0)
      return reject(
        new AgentqError('INVALID_GRAPH', `graph ${graph.id} routes from START straight to END for this input`),
      );
    // One turn at a time per conversation, then `limit` at once per concurrency key: a run that waits is
    // taken in when the run ahead ends (the run-finished hook hands the slot on), or refused (onBusy 'reject').
    let gates;
    try {
      gates = await passRunGates(meta, graph, input.data, {
        store,
        turns: this.turns,
        concurrencyKeys: this.concurrencyKeys,
        logger,
      });
    } catch (error) {
      if (AgentqError.isInstance(error) && ['CONVERSATION_BUSY', 'INVALID_GRAPH'].includes(error.code))
        return reject(error);
      throw error;
    }
    if (!gates.go) return { result: 'turn-waiting' };
    // A conversation's run starts from its latest completed run's history (and memory, when the graph keeps one).
    let messages: Message[] = [];
    const seed = await this.conversations.seed(meta, { keep: memoryKeepOf(state, input.data) });
    if (seed) {
      const keepsMemory = MEMORY_STATE_KEY in graph.channels;
      messages = keepsMemory ? seed.messages : seed.flatMessages;
      if (keepsMemory) state = { ...state, [MEMORY_STATE_KEY]: seed.memory };
      logger.debug(
        { runId: meta.id, conversationId: meta.conversationId, from: seed.fromRunId, messages: messages.length },
        'run continues its conversation',
      );
    }
    // Where the run's own messages start (its result leaves the earlier turns out): before the admission,
    // so a run taken in always has it; a second admission writes the same number.
    if (messages.length > 0) await store.redis.hset(store.keys.runMeta(meta.id), 'seededMessages', messages.length);
    const historyLength = messages.length;
    // The whole earlier history is stored already: the run refers to it and stores only its own messages.
    if (seed?.shared) await store.reads.history.share(meta.id, seed.shared);
    const stored = seed?.shared ? [] : messages;
    const ownNode = own && tasks[own.task]?.node;
    const start =
      own && ownNode
        ? { task: own.task, data: { node: ownNode, superstep: 0, task: own.task, attempt: own.attempt } }
        : undefined;
    const { admitted, started } = await store.creation.admit(
      meta.id,
      graph.version,
      state,
      tasks,
      Date.now(),
      this.options.telemetry.newRunTrace(),
      stored,
      start,
    );
    // 'admitted' means a concurrent attempt got there first and added the jobs itself. A start job is
    // the first task's job already (same id), so it adds only the others.
    const run = { runId: meta.id, graphId: graph.id, priority: meta.priority };
    if (admitted === 'ok' && !own && gates.gated) {
      // A run that waited for its conversation or its key may have left its start job behind, finished
      // or still finishing, under the id of its first task: replace a finished one, and come back (a
      // retried intake job: 'kicked' below) while one is still finishing.
      const added = await stepJobs.ensure(run, 0, tasks);
      if (added < tasks.length)
        throw new AgentqError(
          'UNAVAILABLE',
          `run ${meta.id}: the start job of its turn is still finishing; its first step jobs are checked again`,
          { retryable: true },
        );
    } else if (admitted === 'ok')
      await stepJobs.add(
        run,
        0,
        tasks,
        own ? new Set(tasks.map((_task, index) => index).filter((index) => index !== own.task)) : undefined,
      );
    logger.debug({ runId: meta.id, graph: graph.id, admitted }, 'run taken in');
    return { result: admitted, tasks, started, historyLength };
  }
}
