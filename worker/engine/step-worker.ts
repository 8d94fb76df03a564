import { context as otelContext, type Context } from '@opentelemetry/api';
import { UnrecoverableError, type Job, type WorkerOptions } from 'bullmq';
import { TakingWorker } from '../../shared/bullmq/taking-worker.js';
import type { StepJobData } from '../../shared/contracts/job-schema.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import type { BeginResult } from '../../shared/store/redis-run-store.js';
import type { HandedJob, StepTransitions, TransitionResult } from './step-transitions.js';
import type { TurnGate } from '../runtime/turn-gate.js';

/** What came with a job: its cursor (BEGIN, done by the script that handed it out) and its eager hops so far. */
export interface StepDelivery {
  begin?: BeginResult;
  /** Eager hops in a row that led to this job (0: it came through the wait list). */
  hops: number;
}

/** A step's end: the outcome, and the transition when the step's own script finished its job. */
export interface StepResult {
  outcome: string;
  transition?: TransitionResult;
}

type StepHandler = (
  job: Job<StepJobData>,
  token: string,
  delivery: StepDelivery,
  fetchNext: () => boolean,
) => Promise<StepResult>;

/** Renews the locks of held jobs from outside the main thread (liveness-thread.ts). */
interface LockKeeper {
  holdLock(lockKey: string, token: string): void;
  releaseLock(lockKey: string): void;
}

/**
 * Jobs a cold fetch takes at most in one round trip (one per free slot): a worker with 100 free slots
 * fills them in 4 scripts instead of 100 round trips, and no one script holds Redis for long.
 */
export const TAKE_BATCH_MAX = 32;

/**
 * A BullMQ Worker of one shard's step queue whose jobs arrive with their run's cursor (engine v2,
 * docs/concepts/step-engine.md). BullMQ's blocking wait, lock renewal and stalled-job checks are kept; three of its
 * steps change:
 *  - a cold fetch runs agentq's take script: BullMQ's moveToActive plus BEGIN of the job, for as many
 *    jobs as there are free slots (up to TAKE_BATCH_MAX) in one round trip (`takeJobs`, called by the
 *    BullMQ seam's TakingWorker, whose main loop is BullMQ's with batched takes);
 *  - a step that commits finishes its job in its own transition script, which hands the next job (and its
 *    cursor) back the way BullMQ's fetch-next does; every other end (skip, failure, retry, delay) goes
 *    through BullMQ's own completion and failure paths;
 *  - a job handed back by eager dispatch runs in the same `processJob` call as the step before it.
 * Only TakingWorker's protected API and BullMQ's public API are used here (shared/bullmq/README.md).
 */
export class StepWorker extends TakingWorker<StepJobData> {
  private readonly deliveries = new WeakMap<Job, StepDelivery>();

  constructor(
    private readonly shard: number,
    private readonly handler: StepHandler,
    private readonly transitions: StepTransitions,
    private readonly eventsMaxLen: number,
    options: WorkerOptions,
    /** The trace context a job's BullMQ span goes under (its run's root span), from its cursor. */
    private readonly contextOf: (begin: BeginResult | undefined) => Context | undefined = () => undefined,
    /** Keeps held jobs' locks renewed while the main thread is blocked. */
    private readonly lockKeeper?: LockKeeper,
    /** Spreads job starts over event-loop turns (AGENTQ_STEP_STARTS_PER_TURN). */
    private readonly gate?: TurnGate,
  ) {
    super(STEP_QUEUE, options, TAKE_BATCH_MAX);
  }

  /**
   * Up to `count` jobs in one take script, made BullMQ Jobs; a take that ran the queue dry tells BullMQ so
   * (drained, delays). BullMQ's own fetch (`moveToActive`) is the same take of one job.
   */
  protected async takeJobs(token: string, count: number, name?: string): Promise<Job<StepJobData>[]> {
    const jobs: Job<StepJobData>[] = [];
    for (const taken of await this.transitions.take(this.shard, token, name, this.eventsMaxLen, count)) {
      const job = await this.deliver(taken.handed, taken.token, 0);
      if (job) jobs.push(job);
    }
    return jobs;
  }

  /**
   * Runs `job`, then each job its step's transition hands straight back (an eager hop) in the same call,
   * in the same slot: returned to the main loop, a hop waited for its turn there, behind any fetch that
   * turn makes for a free slot (a round trip). A job handed over any other way (fetch-next from the wait
   * list) goes back to the main loop as BullMQ's fetch-next does.
   */
  override async processJob(
    job: Job<StepJobData>,
    token: string,
    fetchNextCallback = () => true,
  ): Promise<void | Job<StepJobData>> {
    let next = await this.processOne(job, token, fetchNextCallback);
    while (next && this.deliveries.get(next)?.hops) next = await this.processOne(next, token, fetchNextCallback);
    return next;
  }

  private async processOne(
    job: Job<StepJobData>,
    token: string,
    fetchNextCallback: () => boolean,
  ): Promise<void | Job<StepJobData>> {
    const delivery = this.deliveries.get(job) ?? { hops: 0 };
    this.deliveries.delete(job);
    // Without telemetry BullMQ's trace() only awaits the work, one promise more per step: skip it.
    if (!this.opts.telemetry) return this.processDelivered(job, token, delivery, fetchNextCallback);
    // BullMQ's own 'process' span (bullmq-otel), under the run's trace when the cursor names it.
    const processing = () => this.traceProcessing(() => this.processDelivered(job, token, delivery, fetchNextCallback));
    const parent = this.contextOf(delivery.begin);
    return parent ? otelContext.with(parent, processing) : processing();
  }

  private async processDelivered(
    job: Job<StepJobData>,
    token: string,
    delivery: StepDelivery,
    fetchNextCallback: () => boolean,
  ): Promise<void | Job<StepJobData>> {
    const fetchNext = () => fetchNextCallback() && !this.closing && !this.isPaused();
    this.trackLock(job.id!, token, job.processedOn ?? Date.now());
    const lockKey = this.lockKeyOf(job.id!);
    this.lockKeeper?.holdLock(lockKey, token);
    try {
      const turn = this.gate?.pass();
      if (turn) await turn;
      // A job past its stalled limit carries a deferred failure: BullMQ fails it without running it.
      if (job.deferredFailure)
        return await this.failed(new UnrecoverableError(job.deferredFailure), job, token, fetchNextCallback);
      const result = await this.handler(job, token, delivery, fetchNext);
      this.untrackLock(job.id!);
      if (!result.transition) return await this.completeJob(result.outcome, job, token, fetchNextCallback);
      this.emit('completed', job, result.outcome, 'active');
      if (result.transition.finishCode < 0) {
        // The lock was lost (the job stalled and went back to the queue): the commit stands, fenced, and
        // the job is another worker's now.
        this.emit(
          'error',
          new Error(
            `step job ${job.id} was not finished (BullMQ code ${result.transition.finishCode}): its lock was lost`,
          ),
        );
        return undefined;
      }
      return await this.deliver(result.transition.handed, token, delivery.hops + 1);
    } catch (error) {
      return this.failed(error as Error, job, token, fetchNextCallback);
    } finally {
      this.untrackLock(job.id!);
      this.lockKeeper?.releaseLock(lockKey);
    }
  }

  private async failed(
    error: Error,
    job: Job<StepJobData>,
    token: string,
    fetchNextCallback: () => boolean,
  ): Promise<void | Job<StepJobData>> {
    this.untrackLock(job.id!);
    try {
      return await this.failJob(error, job, token, fetchNextCallback);
    } catch (failure) {
      // As BullMQ's own loop does: report, and let the stalled-job check recover the job. Locks are long
      // (AGENTQ_LOCK_DURATION_MS 30 s) and a live process's are not released for it, so let go of this
      // one now, if it is still ours: the check then hands the job on within a second or two.
      this.emit('error', failure as Error);
      await this.transitions.releaseLock(this.shard, job.id!, token).catch(() => undefined);
      return undefined;
    }
  }

  /** A job a script handed to this worker, made a BullMQ Job (as its fetch-next does), its cursor kept for processJob. */
  private async deliver(
    handed: HandedJob | undefined,
    token: string,
    hops: number,
  ): Promise<Job<StepJobData> | undefined> {
    const next = await this.handOut(handed?.next, token);
    if (next && handed) {
      const eagerHops = handed.started ? 1 : hops;
      this.deliveries.set(next, {
        ...(handed.begin ? { begin: handed.begin } : {}),
        hops: handed.eager ? eagerHops : 0,
      });
    }
    return next;
  }
}
