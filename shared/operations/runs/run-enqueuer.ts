import type { JobsOptions } from 'bullmq';
import type { z } from 'zod';
import type { Config } from '../../config/config.js';
import { sleep } from '../../contracts/abort.js';
import { AgentqError } from '../../contracts/errors.js';
import { TenantAdmission, type TenantAdmissionConfig, type RunOrigin } from './tenant-admission.js';
import { newRunId, runIdForIdempotencyKey } from '../../contracts/ids.js';
import {
  runRequestProblem,
  formatZodError,
  graphIdOf,
  runJobSchema,
  START_NODE,
  stepJobId,
  stepJobOptions,
} from '../../contracts/job-schema.js';
import {
  toRunRecord,
  type RedisRunStore,
  type RunMeta,
  type StartJob,
  type StartSlot,
} from '../../store/redis-run-store.js';
import { FairQueue } from '../../store/fair-queue.js';
import { isTerminal, type RunRecord } from '../../contracts/run-record.js';
import type { StepQueues } from '../../store/step-queues.js';
import { FlowGates } from '../../store/flow/flow-gates.js';
import { GraphRollouts } from '../../store/rollouts/graph-rollouts.js';

/** What a producer asks for. Same fields as job schema v1 (docs/reference/job-schema-v1.md), without `v`. */
export const enqueueRequestSchema = runJobSchema.omit({ v: true });
export type EnqueueRequest = z.input<typeof enqueueRequestSchema>;

type ValidEnqueueRequest = z.output<typeof enqueueRequestSchema>;

/** The request checked against job schema v1; → it parsed, or INVALID_INPUT naming each problem. */
export function parseEnqueueRequest(request: EnqueueRequest): ValidEnqueueRequest {
  const parsed = enqueueRequestSchema.safeParse(request);
  if (!parsed.success)
    throw new AgentqError('INVALID_INPUT', `invalid run request: ${formatZodError(parsed.error)}`, {
      details: parsed.error.issues,
    });
  const problem = runRequestProblem(parsed.data);
  if (problem) throw new AgentqError('INVALID_INPUT', `invalid run request: ${problem}`);
  return parsed.data;
}

export const INTAKE_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { count: 5000 },
} as const;

/**
 * Attempts of a start job (START_NODE). Its entry node is not known when it is added, so it gets room
 * for any node's policy; the step processor stops at the entry node's own `maxAttempts`.
 */
const START_JOB_ATTEMPTS = 10;

/**
 * How long a request joining a debounced run waits for that run to exist: its creator claims the key
 * first and creates the run a round trip or two later. Past it the creator is taken for gone.
 */
const DEBOUNCE_CREATION_WAIT_MS = 5000;

/** The options of a run's start job: the step job id of superstep 0, task 0. */
function startJobOptions(runId: string, priority = 0): JobsOptions {
  return stepJobOptions(stepJobId(runId, 0, 0), START_JOB_ATTEMPTS, priority);
}

interface EnqueueExtras {
  /**
   * A run id agentq derived (a batch's question, a schedule's tick, the API's tenant-scoped name for a
   * client's runId): used as it is. A request's own `runId` is the client's and may not be in that
   * namespace (ids.ts, DERIVED_RUN_ID_PREFIXES).
   */
  runId?: string;
  /** The batch this run answers an item of. */
  batchId?: string;
  /** The schedule whose tick starts this run. */
  scheduleId?: string;
  /** BullMQ priority of the run's step jobs (1 most urgent); absent: none — the wait list, taken first. */
  priority?: number;
  /** Who creates the run, for its admission (TenantAdmission). @default 'batch' with a batchId, 'schedule' with a scheduleId, else 'producer' */
  origin?: RunOrigin;
  /** The API key (hash id) the run is charged to: a schedule's creator's. */
  keyId?: string;
  /** A replay's original run: the new run's calls are answered by its recording. */
  replay?: { runId: string; live: boolean };
  /** The run and step that start this one (a child run: origin 'child'), and whether the step waits for it. */
  parent?: { runId: string; step: string; wait: boolean; span?: string };
  /** A worker's free slot the run's start job is taken into as it is created (RunCreation.create's `take`). */
  take?: StartSlot;
}

/** What an enqueue left: the run, whether it was created now, and its start job when `take` took it. */
export interface Enqueued {
  record: RunRecord;
  created: boolean;
  meta: RunMeta;
  /** The start job as BullMQ's fetch replies (`[job hash pairs, id, …]`), active and locked with the slot's token. */
  taken?: unknown[];
}

/**
 * Creates a run (status `queued`) and adds its start job, the first step job (docs/concepts/step-engine.md): the worker
 * that takes it takes the run in and runs the entry task. Used by the client library, the HTTP API, the
 * CLI, schedule ticks and the batch dispatcher alike, so every run starts the same way, through the same
 * admission (TenantAdmission). (Raw jobs of other services come in through the intake queue instead, and
 * pass the same admission there.)
 */
export class RunEnqueuer {
  /** The admission of every run this enqueuer creates; a retry passes it too (AgentClient.retry). */
  readonly admission: TenantAdmission;
  private readonly gates: FlowGates;
  private readonly fair: FairQueue;
  /** Which version a run that names none gets (docs/guides/rolling-out-graph-versions.md). */
  readonly rollouts: GraphRollouts;

  constructor(
    private readonly store: RedisRunStore,
    private readonly stepQueues: StepQueues,
    private readonly config: Pick<Config, 'tenant' | 'defaultMaxSteps' | 'defaultDeadlineMs'> &
      Partial<TenantAdmissionConfig & Pick<Config, 'graphHeartbeatMs'>>,
    /**
     * A worker's own intake, for runs a worker enqueues (a schedule's tick): it takes the run in at once
     * and adds the entry tasks' jobs itself. → false when it cannot (this worker lacks the graph); the
     * run then gets a start job like any other. (A batch's next question does without: its start job goes
     * in with the run, one round trip fewer before its first step.)
     */
    private readonly admitInline?: (meta: RunMeta) => Promise<boolean>,
  ) {
    this.admission = new TenantAdmission(store.redis, store.keys, config);
    this.fair = new FairQueue(store.keys, config.tenantWeights);
    this.gates = new FlowGates(store.redis, store.keys);
    this.rollouts = new GraphRollouts({
      redis: store.redis,
      keys: store.keys,
      ...(config.graphHeartbeatMs === undefined ? {} : { heartbeatMs: config.graphHeartbeatMs }),
    });
  }

  async enqueue(request: EnqueueRequest, extras: EnqueueExtras = {}): Promise<Enqueued> {
    return this.enqueueValid(parseEnqueueRequest(request), extras);
  }

  /** `enqueue` for a request already through parseEnqueueRequest (the client checks it before waiting for Redis). */
  async enqueueValid(data: ValidEnqueueRequest, extras: EnqueueExtras = {}): Promise<Enqueued> {
    const tenant = data.tenant ?? this.config.tenant;
    const runId =
      extras.runId ??
      data.runId ??
      (data.idempotencyKey ? runIdForIdempotencyKey(tenant, data.idempotencyKey) : newRunId());
    const gate = await this.gate(data, tenant, runId);
    if ('standing' in gate) return { record: toRunRecord(gate.standing), created: false, meta: gate.standing };
    const { delayMs } = gate;
    const now = Date.now();
    const deadlineMs = data.options?.deadlineMs ?? this.config.defaultDeadlineMs;
    // A version the run names wins; else the graph's rollout picks one by the run id, written in the record.
    const graphVersion = data.graphVersion ?? (await this.rollouts.versionFor(data.graph, runId));
    const graphId = graphIdOf({ graph: data.graph, graphVersion: graphVersion ?? null });
    // The start job goes in with the run, in one script — unless this worker takes the run in itself,
    // or the run starts later (a debounce or throttle): its start job is then added delayed, below.
    const start =
      this.admitInline || delayMs > 0
        ? undefined
        : this.withFairness(
            this.stepQueues.startJob(
              runId,
              { runId, superstep: 0, task: 0, node: START_NODE, graph: graphId },
              START_JOB_ATTEMPTS,
            ),
            tenant,
            runId,
            extras.take,
          );
    const own = data.priority ?? extras.priority ?? 0;
    const origin = extras.origin ?? (extras.batchId ? 'batch' : extras.scheduleId ? 'schedule' : 'producer');
    let admission;
    try {
      admission = await this.admission.admit({
        tenant,
        runId,
        origin,
        ...(extras.keyId === undefined ? {} : { keyId: extras.keyId }),
        priority: own,
        bytes: Buffer.byteLength(JSON.stringify(data.input ?? null)),
        now,
      });
    } catch (error) {
      // A replay of the caller's own run answers with that run whatever the limits say now.
      const existing = await this.store.reads.get(runId).catch(() => null);
      if (existing?.tenant === tenant) return { record: toRunRecord(existing), created: false, meta: existing };
      if (data.throttle) await this.gates.unthrottle(tenant, data.throttle, runId).catch(() => undefined);
      throw error;
    }
    const { priority } = admission;
    let created: boolean;
    let meta: RunMeta;
    let taken: unknown[] | undefined;
    try {
      ({ meta, created, taken } = await this.store.creation.create(
        {
          id: runId,
          tenant,
          graph: data.graph,
          ...(graphVersion === undefined ? {} : { graphVersion }),
          input: data.input,
          maxSteps: data.options?.maxSteps ?? this.config.defaultMaxSteps,
          ...(deadlineMs > 0 ? { deadlineAt: now + deadlineMs } : {}),
          ...(data.options?.tokenBudget ? { tokenBudget: data.options.tokenBudget } : {}),
          ...(data.idempotencyKey === undefined ? {} : { idempotencyKey: data.idempotencyKey }),
          ...(data.webhookUrl === undefined ? {} : { webhookUrl: data.webhookUrl }),
          ...(extras.batchId === undefined ? {} : { batchId: extras.batchId }),
          ...(extras.scheduleId === undefined ? {} : { scheduleId: extras.scheduleId }),
          ...(priority > 0 ? { priority } : {}),
          ...(data.conversationId === undefined ? {} : { conversationId: data.conversationId }),
          ...(extras.replay === undefined ? {} : { replay: extras.replay }),
          ...(extras.parent === undefined ? {} : { parent: extras.parent }),
          ...(data.onBusy === undefined ? {} : { onBusy: data.onBusy }),
          ...(data.concurrency === undefined ? {} : { concurrency: data.concurrency }),
          now,
        },
        start,
      ));
    } catch (error) {
      await admission.undo();
      throw error;
    }
    // An existing run of another tenant, or one already finished, holds nothing this admission took.
    if (!created && (meta.tenant !== tenant || isTerminal(meta.status))) await admission.undo();
    if (meta.tenant !== tenant) throw new AgentqError('CONFLICT', `run id ${runId} is taken; choose another runId`);
    // The start job's id is the first step's (`<runId>.s0.t0`): a retried enqueue adds nothing while it
    // exists, and a start job for a run already taken in just runs that run's first task.
    if (!start && meta.status === 'queued' && meta.tasks === null) {
      // A failed inline intake falls back to the start job; taking a run in twice is a no-op.
      if (delayMs === 0 && this.admitInline && (await this.admitInline(meta).catch(() => false)))
        return { record: toRunRecord(meta), created, meta };
      await this.stepQueues
        .forRun(runId)
        .add(
          START_NODE,
          { runId, superstep: 0, task: 0, node: START_NODE, graph: graphIdOf(meta) },
          { ...startJobOptions(runId, meta.priority), ...(delayMs > 0 ? { delay: delayMs } : {}) },
        );
    }
    return { record: toRunRecord(meta), created, meta, ...(taken ? { taken } : {}) };
  }

  /** The start job with what weighted fairness (AGENTQ_TENANT_WEIGHTS) needs to decide its priority as it is added. */
  private withFairness(start: StartJob, tenant: string, runId: string, take?: StartSlot): StartJob {
    const fair = this.fair.argsFor(tenant, runId);
    // A slot takes only a job of its own worker's queue: a run of another shard waits in its own.
    const taken = take?.queuePrefix === start.queuePrefix ? { take } : {};
    return { ...start, ...(fair ? { fair } : {}), ...taken };
  }

  /**
   * The request's debounce or throttle (FlowGates): → the run that stands for it (a debounce's pending
   * run, which takes a trailing request's input and a later start), or how long the new run waits.
   */
  private async gate(
    data: ValidEnqueueRequest,
    tenant: string,
    runId: string,
  ): Promise<{ standing: RunMeta } | { delayMs: number }> {
    if (data.throttle) return { delayMs: await this.gates.throttle(tenant, data.throttle, runId) };
    if (!data.debounce) return { delayMs: 0 };
    let outcome = await this.gates.debounce(tenant, data.debounce, runId);
    // A pending run that started (or vanished) meanwhile is stale: the key passes to the new run.
    for (let tries = 0; outcome.kind !== 'new' && outcome.runId !== runId && tries < 3; tries++) {
      const pending = outcome.runId;
      if (outcome.kind === 'drop') {
        const meta = await this.pendingRun(pending, (run) => this.store.reads.get(run));
        if (meta) return { standing: meta };
      } else if ((await this.pendingRun(pending, (run) => this.replaceInput(run, data.input))) === 'replaced') {
        const job = await this.stepQueues.forRun(pending).getJob(stepJobId(pending, 0, 0));
        // Not delayed any more (it is being taken now): it starts with the input just written.
        await job?.changeDelay(outcome.delayMs).catch(() => undefined);
        const meta = await this.store.reads.get(pending);
        if (meta) return { standing: meta };
      }
      outcome = await this.gates.debounce(tenant, data.debounce, runId, pending);
    }
    return { delayMs: outcome.kind === 'drop' ? 0 : outcome.delayMs };
  }

  private async replaceInput(runId: string, input: unknown): Promise<'replaced' | 'started' | null> {
    const outcome = await this.store.creation.replacePendingInput(runId, input, Date.now());
    return outcome === 'missing' ? null : outcome;
  }

  /** `act` on a debounce's pending run, waited for while it is not there yet (its creator is creating it). */
  private async pendingRun<T>(runId: string, act: (runId: string) => Promise<T | null>): Promise<T | null> {
    const until = Date.now() + DEBOUNCE_CREATION_WAIT_MS;
    for (;;) {
      const outcome = await act(runId);
      if (outcome !== null || Date.now() > until) return outcome;
      await sleep(25);
    }
  }
}
