import { Queue } from 'bullmq';
import { asRedisFaultError } from '../../shared/redis/redis-fault.js';
import { MAX_INPUT_DEPTH, nestsWithin, type StoredRunJob } from '../../shared/contracts/job-schema.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { INTAKE_QUEUE, queueStreamOptions, SCHEDULES_QUEUE } from '../../shared/contracts/queues.js';
import { Schedules } from '../../shared/operations/schedules/schedules.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { StepQueues } from '../../shared/store/step-queues.js';
import { bullmqConnection, type BullmqConnection } from '../../shared/bullmq/bullmq-connection.js';
import {
  enqueueRequestSchema,
  INTAKE_JOB_OPTIONS,
  parseEnqueueRequest,
  RunEnqueuer,
  type EnqueueRequest,
} from '../../shared/operations/runs/run-enqueuer.js';
import { autopilotSettingsOf } from '../../shared/operations/batches/batch-autopilot.js';
import { BatchDispatcher } from '../../shared/operations/batches/batch-dispatcher.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
// The same hook as the workers' (a queued run cancelled here finishes here): metrics, in-flight cap, webhook job.
import { createRunFinishedHook } from '../../shared/operations/runs/run-finished-hook.js';
import { ServedGraphs } from '../../shared/store/served-graphs.js';
import { AnswerCache } from '../../shared/store/answer-cache.js';
import { RunWaits, type SendEventResult } from '../../shared/store/events/run-waits.js';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { RunReader, type RunReaderOptions } from './run-reader.js';
import { forkRun, type ForkOptions } from './fork-run.js';
import { replayRun, type ReplayOptions } from './replay-run.js';
import { replayReport, type ReplayReport } from './replay-report.js';
import { cancelRun } from './cancel-run.js';
import { cancelRuns, type CancelRunsFilter, type CancelRunsOptions, type CancelRunsSummary } from './cancel-runs.js';
import {
  retryFailedRuns,
  type FailedRunsFilter,
  type RetryFailedOptions,
  type RetryFailedSummary,
} from './retry-failed-runs.js';

export { enqueueRequestSchema, type EnqueueRequest };
import type { BatchesApi, BudgetsApi, SchedulesApi, SendEventRequest } from './client-apis.js';
import { budgetsApi, rolloutsApi, type GraphRollout, type RolloutChange, type RolloutsApi } from './operator-apis.js';
export type { BatchesApi, BudgetsApi, SchedulesApi, SendEventRequest, SendEventResult };
export type { CancelRunsFilter, CancelRunsOptions, CancelRunsSummary };
export type { GraphRollout, RolloutChange, RolloutsApi };
export type { FailedRunsFilter, ForkOptions, ReplayOptions, ReplayReport, RetryFailedOptions, RetryFailedSummary };

export interface EnqueueOptions {
  /**
   * Queue the run even when live workers exist and none serves its graph; it then waits up to
   * AGENTQ_UNSERVED_GRAPH_WAIT_MS for one before it fails with UNKNOWN_GRAPH. @default false (refused at once)
   */
  queueUnserved?: boolean;
  /**
   * For agentq's own producers (the HTTP API): the run id it derived for the caller (a tenant-scoped
   * name, an idempotency key's id), used as it is. It is in agentq's namespace, which a request's own
   * `runId` may not enter (ids.ts). @default derived here from the request
   */
  derivedRunId?: string;
}

/** Options of `AgentClient`: `RunReader`'s, with the whole configuration. */
export interface AgentClientOptions extends RunReaderOptions {
  /** @default loadConfig() (the environment) */
  config?: Config;
}

/**
 * The producer side of agentq, for services that can reach Redis: enqueue runs, read them, wait for
 * them, cancel and retry them, follow their events. Fails fast when Redis is down (no offline queue,
 * a command timeout) instead of hanging. The reads are `RunReader`'s; this adds what puts jobs on the
 * queues (BullMQ).
 *
 * Reads by run id are not tenant-scoped: this client is for trusted backends; the HTTP API scopes by
 * the caller's key.
 */
export class AgentClient extends RunReader {
  private readonly intakeQueue: Queue;
  private readonly schedulesQueue: Queue;
  /** The step queues per shard (the API's callback route wakes steps through them). */
  readonly stepQueues: StepQueues;
  private readonly bullmq: BullmqConnection;
  private readonly enqueuer: RunEnqueuer;
  private readonly served: ServedGraphs;
  private readonly batchDispatcher: BatchDispatcher;
  /** Batch Q&A through the queue. */
  readonly batches: BatchesApi;
  /** Scheduled runs (BullMQ job schedulers; the workers start each tick's run). */
  readonly schedules: SchedulesApi;
  /** Tenant budgets and usage (the same as `/v1/admin/tenants/:tenant/limits` and `/v1/usage`). */
  readonly budgets: BudgetsApi;
  /** Graph rollouts: which version new runs get (the same as `/v1/graphs/:name/rollout`). */
  readonly rollouts: RolloutsApi;

  /** The whole configuration: queues and hooks need more than the reads' Redis settings. */
  declare protected readonly config: Config;

  constructor(options: AgentClientOptions = {}) {
    const config = options.config ?? loadConfig();
    super({ ...options, config }, (redis) => createRunFinishedHook({ redis, config }));
    this.bullmq = bullmqConnection(this.config, 'producer', this.config.redisCommandTimeoutMs);
    const connection = this.bullmq.connection;
    const streams = queueStreamOptions(this.config.queueEventsMaxLen);
    this.intakeQueue = new Queue(INTAKE_QUEUE, { connection, prefix: this.config.queuePrefix, ...streams });
    this.intakeQueue.on('error', () => undefined);
    this.schedulesQueue = new Queue(SCHEDULES_QUEUE, { connection, prefix: this.config.queuePrefix, ...streams });
    this.schedulesQueue.on('error', () => undefined);
    this.stepQueues = new StepQueues(this.config.shards, this.config.queuePrefix, { connection, ...streams });
    this.enqueuer = new RunEnqueuer(this.store, this.stepQueues, this.config);
    this.served = new ServedGraphs({
      redis: this.redis,
      keys: this.store.keys,
      heartbeatMs: this.config.graphHeartbeatMs,
    });
    this.batchDispatcher = new BatchDispatcher({
      redis: this.redis,
      keys: this.store.keys,
      store: this.store,
      enqueuer: this.enqueuer,
      retentionSeconds: this.config.retentionSeconds,
      // Batches with a deadline or a budget are planned from these (and the tenant's measured runs).
      autopilot: autopilotSettingsOf(this.config),
      // A batch asking for the provider's Batch API is checked against the provider first.
      providerBatches: {
        supported: async () => {
          // Loaded on use: the openai SDK stays out of the CLI's cold start.
          const { OpenAIProviderBatches } = await import('../../shared/adapters/openai/openai-provider-batches.js');
          const { endpointOf } = await import('../../shared/adapters/create-embedder.js');
          return new OpenAIProviderBatches({
            model: this.config.llmModel ?? 'unset',
            ...endpointOf(this.config),
          }).supported();
        },
        fallback: this.config.providerBatchFallback,
      },
    });
    const dispatcher = this.batchDispatcher;
    this.batches = {
      submit: async (request, { idempotencyKey, tenant = this.tenant } = {}) => {
        await this.ready();
        return dispatcher.submit(request, { tenant, ...(idempotencyKey ? { idempotencyKey } : {}) });
      },
      get: async (batchId) => {
        await this.ready();
        return dispatcher.get(batchId);
      },
      results: async (batchId) => {
        await this.ready();
        return dispatcher.results(batchId);
      },
      cancel: async (batchId) => {
        await this.ready();
        return dispatcher.cancel(batchId, (runId) => this.cancel(runId));
      },
    };
    const schedules = new Schedules({
      redis: this.redis,
      keys: this.store.keys,
      queue: this.schedulesQueue,
      requireGraph: (graph, version) => this.served.requireServed(graph, version),
    });
    const budget = new TenantBudget(this.redis, this.store.keys, { defaults: this.config.tenantBudgetDefaults });
    this.budgets = budgetsApi(budget, () => this.ready(), this.tenant);
    this.rollouts = rolloutsApi(this.enqueuer.rollouts, () => this.ready());
    this.schedules = {
      create: async (spec, { tenant = this.tenant, keyId } = {}) => {
        await this.ready();
        return schedules.create(tenant, spec, keyId === undefined ? {} : { keyId });
      },
      list: async ({ tenant = this.tenant } = {}) => {
        await this.ready();
        return schedules.list(tenant);
      },
      get: async (scheduleId, { tenant = this.tenant } = {}) => {
        await this.ready();
        return schedules.get(tenant, scheduleId);
      },
      update: async (scheduleId, patch, { tenant = this.tenant } = {}) => {
        await this.ready();
        return schedules.update(tenant, scheduleId, patch);
      },
      pause: async (scheduleId, { tenant = this.tenant } = {}) => {
        await this.ready();
        return schedules.update(tenant, scheduleId, { paused: true });
      },
      resume: async (scheduleId, { tenant = this.tenant } = {}) => {
        await this.ready();
        return schedules.update(tenant, scheduleId, { paused: false });
      },
      delete: async (scheduleId, { tenant = this.tenant } = {}) => {
        await this.ready();
        return schedules.delete(tenant, scheduleId);
      },
      runs: async (scheduleId, { tenant = this.tenant } = {}) => {
        await this.ready();
        return (await schedules.definition(tenant, scheduleId)) ? schedules.runs(tenant, scheduleId) : null;
      },
    };
  }

  /**
   * Creates the run (status `queued`) and hands it to the workers. The same idempotency key (per tenant)
   * returns the same run and adds nothing twice.
   */
  async enqueue(
    request: EnqueueRequest,
    { queueUnserved = false, derivedRunId }: EnqueueOptions = {},
  ): Promise<RunRecord> {
    // Validate before touching Redis, so a bad request is an error even when Redis is down.
    const valid = parseEnqueueRequest(request);
    await this.ready();
    try {
      // A graph that live workers exist for but none serves would only wait, then fail: say so now.
      if (!queueUnserved) await this.served.requireServed(valid.graph, valid.graphVersion);
      return (
        await this.enqueuer.enqueueValid(
          { tenant: this.tenant, ...valid },
          derivedRunId === undefined ? {} : { runId: derivedRunId },
        )
      ).record;
    } catch (error) {
      // Redis full or gone is REDIS_FULL / REDIS_UNAVAILABLE with what to do, not Redis's raw reply.
      throw asRedisFaultError(error, 'enqueue the run');
    }
  }

  /**
   * Sends an event to a run (`runId`) or to every run of the tenant waiting on a correlation key (`key`):
   * each waiting step whose `context.waitFor` it matches wakes with it, once per run; it is kept
   * AGENTQ_EVENT_WINDOW_MS for waits still to come. Not tenant-checked by run id (a trusted backend's client).
   */
  async sendEvent(event: SendEventRequest): Promise<SendEventResult> {
    await this.ready();
    const waits = new RunWaits(this.redis, this.store.keys, this.config.retentionSeconds);
    const { tenant = this.tenant, ...rest } = event;
    return waits.send({ tenant, ...rest, windowMs: this.config.eventWindowMs }, this.stepQueues);
  }

  /**
   * Clears the tenant's answer cache (docs/guides/batch-qa.md#answer-cache): of one collection, or of every
   * one. Answers stored before are never returned again (they expire with their TTL).
   */
  async clearAnswerCache({
    collection,
    tenant = this.tenant,
  }: { collection?: string; tenant?: string } = {}): Promise<void> {
    await this.ready();
    const cache = new AnswerCache(this.redis, this.store.keys, { ttlSeconds: this.config.answerCacheTtlSeconds });
    await cache.clear(tenant, collection === undefined ? {} : { collection });
  }

  /**
   * Cancels a run. One with no step in flight is cancelled at once; a running one is cancelled at its
   * step boundary (the running node's AbortSignal fires). Returns the record after the request.
   */
  async cancel(runId: string): Promise<RunRecord> {
    return (await this.cancelOne(runId)).record;
  }

  private cancelOne(runId: string): Promise<{ record: RunRecord; changed: boolean }> {
    return cancelRun({ store: this.store, stepQueues: this.stepQueues, require: (id) => this.require(id) }, runId);
  }

  /**
   * Cancels runs in bulk: every run of `filter.status` (queued, running, waiting) matching its graph, error,
   * time range and tenant, each through `cancel`, at `options.ratePerSecond`; `dryRun` only counts them.
   * A run that finished meanwhile is skipped; two racing calls never count a run twice.
   */
  async cancelRuns(filter: CancelRunsFilter, options: CancelRunsOptions = {}): Promise<CancelRunsSummary> {
    await this.ready();
    return cancelRuns(
      { list: (listFilter) => this.list(listFilter), cancel: (runId) => this.cancelOne(runId) },
      filter,
      options,
    );
  }

  /**
   * Retries a failed run from its last commit (the failed step runs again, with fresh attempts). It is in
   * flight again, so it passes the admission (the tenant's in-flight cap) as a new run does. `failedAt`:
   * only if its failure is still the one that ended then (CONFLICT otherwise: someone retried it since).
   */
  async retry(runId: string, { failedAt }: { failedAt?: number } = {}): Promise<RunRecord> {
    await this.require(runId);
    const meta = await this.store.reads.get(runId);
    if (!meta) return this.require(runId);
    // Only a failed run is retried (store.retry says why not): only then does it take a slot.
    const admission =
      meta.status === 'failed'
        ? await this.enqueuer.admission.admit({
            tenant: meta.tenant,
            runId,
            origin: 'retry',
            priority: meta.priority ?? 0,
            bytes: 0,
          })
        : undefined;
    let superstep: number;
    try {
      ({ superstep } = await this.store.lifecycle.retry(runId, Date.now(), failedAt));
    } catch (error) {
      await admission?.undo();
      throw error;
    }
    // A question of a batch is in flight again: its batch's progress counts it running, not failed.
    if (meta.batchId) await this.batchDispatcher.onRunRetried(runId, meta.batchId);
    const job: StoredRunJob = { v: 1, stored: true, runId };
    // A fresh job id: the run's first intake job may still be kept as completed or failed.
    await this.intakeQueue.add('retry', job, {
      ...INTAKE_JOB_OPTIONS,
      jobId: `${runId}.retry.s${superstep}.${Date.now()}`,
    });
    return this.require(runId);
  }

  /**
   * Retries failed runs in bulk: every failed run matching `filter` (error code, since, graph),
   * from its failed step, at `options.ratePerSecond`; `dryRun` only counts them. Two racing calls never
   * retry a run twice. → what matched, what was retried, what was skipped and why.
   */
  async retryFailed(filter: FailedRunsFilter = {}, options: RetryFailedOptions = {}): Promise<RetryFailedSummary> {
    await this.ready();
    return retryFailedRuns(
      { list: (listFilter) => this.list(listFilter), retry: (runId, retryOptions) => this.retry(runId, retryOptions) },
      filter,
      options,
    );
  }

  /** Answers a run waiting on an interrupt: the step that asked runs again and receives `value`. `stepId`: only that step's. */
  async resume(runId: string, value: unknown, options: { stepId?: string } = {}): Promise<RunRecord> {
    // Deeper JSON cannot be stored: JSON.stringify recurses and overflows the stack.
    if (!nestsWithin(value, MAX_INPUT_DEPTH))
      throw new AgentqError(
        'INVALID_INPUT',
        `the resume value of run ${runId} nests more than ${MAX_INPUT_DEPTH} arrays/objects deep; send a flatter value`,
      );
    await this.require(runId);
    const { superstep } = await this.store.lifecycle.resume(runId, value, Date.now(), options);
    const job: StoredRunJob = { v: 1, stored: true, runId };
    await this.intakeQueue.add('resume', job, {
      ...INTAKE_JOB_OPTIONS,
      jobId: `${runId}.resume.s${superstep}.${Date.now()}`,
    });
    return this.require(runId);
  }

  /**
   * Forks a finished run, or one waiting on an interrupt, from its step `options.from`: a new run
   * with the original's state, history and step log as committed just before that step (those steps are
   * inherited, not run again), optionally a state patch (`set`) and another graph version.
   */
  async fork(runId: string, options: ForkOptions): Promise<RunRecord> {
    await this.ready();
    return forkRun(
      {
        store: this.store,
        admission: this.enqueuer.admission,
        served: this.served,
        handOver: async (forkId) => {
          const job: StoredRunJob = { v: 1, stored: true, runId: forkId };
          await this.intakeQueue.add('fork', job, { ...INTAKE_JOB_OPTIONS, jobId: `${forkId}.fork` });
        },
      },
      runId,
      options,
    );
  }

  /**
   * Replays a finished run's input through its graph (or `options.graphVersion`) with the model and tool
   * calls answered by its recording: zero paid calls; the first call that differs stops it (REPLAY_DIVERGED)
   * unless `continueLive`. → the replay run; `replayReport` gives its verdict once it finished.
   */
  async replay(runId: string, options: ReplayOptions = {}): Promise<RunRecord> {
    await this.ready();
    return replayRun({ store: this.store, enqueuer: this.enqueuer, served: this.served }, runId, options);
  }

  /** A replay run's verdict: `diverged` and, when true, the step, node and diff. */
  async replayReport(replayRunId: string): Promise<ReplayReport> {
    await this.ready();
    return replayReport(this.store, replayRunId);
  }

  override async close(): Promise<void> {
    const queues = [this.intakeQueue, this.schedulesQueue, ...this.stepQueues.all()];
    // A queue's QUIT fails when its connection is down or reconnecting ("Stream isn't writeable"), and BullMQ
    // then leaves that connection reconnecting for ever: the CLI that closed it never exited. Drop it
    // instead, without waiting: a connection dropped between reconnects never says it ended.
    await Promise.all(queues.map((queue) => queue.close().catch(() => void queue.disconnect().catch(() => undefined))));
    this.bullmq.close();
    await super.close();
  }
}
