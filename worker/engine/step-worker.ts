import { context as otelContext, type Context } from '@opentelemetry/api';
import { AsyncFifoQueue, SpanKind, UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { StepJobData } from '../../shared/contracts/job-schema.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import type { BeginResult } from '../../shared/store/redis-run-store.js';
import type { HandedJob, StepTransitions, TransitionResult } from './step-transitions.js';
import type { TurnGate } from './turn-gate.js';

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

export type StepHandler = (
  job: Job<StepJobData>,
  token: string,
  delivery: StepDelivery,
  fetchNext: () => boolean,
) => Promise<StepResult>;

/** Renews the locks of held jobs from outside the main thread (liveness-thread.ts). */
export interface LockKeeper {
  holdLock(lockKey: string, token: string): void;
  releaseLock(lockKey: string): void;
}

/** BullMQ's Worker internals this subclass uses and BullMQ's types keep private (pinned to BULLMQ_VERSION). */
interface WorkerInternals {
  updateDelays(limitDelay?: number, delayUntil?: number): void;
  mainLoop(): Promise<void>;
  mainLoopQueue: AsyncFifoQueue<void | Job<StepJobData>> | null;
  waiting: Promise<number> | null;
  drained: boolean;
  blockUntil: number;
  isRateLimited(): boolean;
  waitForRateLimit(): Promise<void>;
  retryIfFailed<T>(fn: () => Promise<T>, options: { delayInMs?: number; onlyEmitError?: boolean }): Promise<T>;
  _getNextJob(token: string, options: { block: boolean }): Promise<Job<StepJobData> | undefined>;
}

/**
 * Jobs a cold fetch takes at most in one round trip (one per free slot): a worker with 100 free slots
 * fills them in 4 scripts instead of 100 round trips, and no one script holds Redis for long.
 */
export const TAKE_BATCH_MAX = 32;

/** sha1 of the source of BullMQ's Worker.prototype.mainLoop, which StepWorker's own loop copies (bullmq 6.7.0). */
export const BULLMQ_MAIN_LOOP_SHA1 = 'd2b79426bfbba368fe1ca1673b63c15dd08673e7';

/**
 * A BullMQ Worker of one shard's step queue whose jobs arrive with their run's cursor (engine v2, DESIGN
 * §2). BullMQ's blocking wait, lock renewal and stalled-job checks are kept; three of its steps change:
 *  - a cold fetch runs agentq's take script: BullMQ's moveToActive plus BEGIN of the job, for as many
 *    jobs as there are free slots (up to TAKE_BATCH_MAX) in one round trip (`stepMainLoop` below);
 *  - a step that commits finishes its job in its own transition script, which hands the next job (and its
 *    cursor) back the way BullMQ's fetch-next does; every other end (skip, failure, retry, delay) goes
 *    through BullMQ's own completion and failure paths;
 *  - a job handed back by eager dispatch runs in the same `processJob` call as the step before it.
 */
export class StepWorker extends Worker<StepJobData> {
  private readonly deliveries = new WeakMap<Job, StepDelivery>();

  constructor(
    private readonly shard: number,
    private readonly handler: StepHandler,
    private readonly transitions: StepTransitions,
    private readonly eventsMaxLen: number,
    options: WorkerOptions,
    /** The trace context a job's BullMQ span goes under (its run's root span), from its cursor. */
    private readonly contextOf: (begin: BeginResult | undefined) => Context | undefined = () => undefined,
    /** Keeps held jobs' locks renewed while the main thread is blocked (issue 20). */
    private readonly lockKeeper?: LockKeeper,
    /** Spreads job starts over event-loop turns (AGENTQ_STEP_STARTS_PER_TURN). */
    private readonly gate?: TurnGate,
  ) {
    // The processor is never called: processJob below runs the step itself.
    super(STEP_QUEUE, async () => undefined, { ...options, autorun: false });
    // BullMQ's main loop is a private method: this instance's own takes its place (run() calls it).
    (this as unknown as WorkerInternals).mainLoop = () => this.stepMainLoop();
  }

  /**
   * BullMQ's main loop (Worker.mainLoop of BULLMQ_VERSION; test/unit/bullmq-functions.test.ts fails when
   * an upgrade changes it) with one change: while the queue is not drained and more than one slot
   * is free, the free slots are filled by take scripts (up to TAKE_BATCH_MAX jobs) instead of one
   * moveToActive round trip each. BullMQ's loop fetches in sequence and starts the fetched jobs only once
   * every free slot has been fetched for; when 100 runs finish together (a batch's wave, a burst of
   * enqueues), their successors waited ~30 ms of round trips before the first of them started
   * (`npm run bench:steps -- --compare`, five runs before and after in turns: engine_vs_bullmq_chain_r100
   * median 0.80 → 0.90, together with the eager hops in processJob below).
   * A drained queue still goes through BullMQ's own blocking fetch.
   */
  private async stepMainLoop(): Promise<void> {
    const internals = this as unknown as WorkerInternals;
    const fifo = new AsyncFifoQueue<void | Job<StepJobData>>();
    internals.mainLoopQueue = fifo;
    let tokenPostfix = 0;
    while ((!this.closing && !this.isPaused()) || fifo.numTotal() > 0) {
      while (
        !this.closing &&
        !this.isPaused() &&
        !internals.waiting &&
        fifo.numTotal() < this.concurrency &&
        !internals.isRateLimited()
      ) {
        const token = `${this.id}:${tokenPostfix++}`;
        const free = this.concurrency - fifo.numTotal();
        if (free > 1 && !internals.drained) {
          const taken = await internals.retryIfFailed(() => this.takeMany(token, Math.min(free, TAKE_BATCH_MAX)), {
            delayInMs: this.opts.runRetryDelay,
            onlyEmitError: true,
          });
          for (const job of taken ?? []) fifo.add(Promise.resolve(job));
          // Ran dry: drained now, so the next turn waits on the queue the BullMQ way (its blocking fetch
          // in the queue below, to wake this loop when a job comes).
          if (taken) continue;
          // The take failed (emitted as an error): as after BullMQ's failed fetch, the loop takes a turn.
          fifo.add(Promise.resolve());
          break;
        }
        // From here on BullMQ's own loop.
        const fetchedJob = internals.retryIfFailed(() => internals._getNextJob(token, { block: true }), {
          delayInMs: this.opts.runRetryDelay,
          onlyEmitError: true,
        });
        fifo.add(fetchedJob);
        if (internals.waiting && fifo.numTotal() > 1) break;
        const job = await fetchedJob;
        if (!job && fifo.numTotal() > 1) break;
        if (internals.blockUntil) break;
      }
      let job: void | Job<StepJobData>;
      do {
        job = await fifo.fetch();
      } while (!job && fifo.numQueued() > 0);
      if (job) fifo.add(this.processJob(job, job.token!, () => fifo.numTotal() <= this.concurrency));
      else if (fifo.numQueued() === 0) await internals.waitForRateLimit();
    }
    if (internals.mainLoopQueue === fifo) internals.mainLoopQueue = null;
  }

  /**
   * Up to `count` jobs in one take script, made BullMQ Jobs; a take that ran the queue dry tells BullMQ so
   * (drained, delays). BullMQ's own fetch (`moveToActive`) is the same take of one job.
   */
  private async takeMany(token: string, count: number, name = this.opts.name): Promise<Job<StepJobData>[]> {
    const jobs: Job<StepJobData>[] = [];
    for (const taken of await this.transitions.take(this.shard, token, name, this.eventsMaxLen, count)) {
      const job = await this.handOut(taken.handed, taken.token, 0);
      if (job) jobs.push(job);
    }
    return jobs;
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job<StepJobData>> {
    const [job] = await this.takeMany(token, 1, name);
    // Undefined when the queue ran dry, as BullMQ's own moveToActive returns (its type says Job).
    return job!;
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
    const processing = () =>
      this.trace(SpanKind.CONSUMER, 'process', this.name, () =>
        this.processDelivered(job, token, delivery, fetchNextCallback),
      );
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
    this.lockManager.trackJob(job.id!, token, job.processedOn ?? Date.now(), false);
    const lockKey = `${this.toKey(job.id!)}:lock`;
    this.lockKeeper?.holdLock(lockKey, token);
    try {
      const turn = this.gate?.pass();
      if (turn) await turn;
      // A job past its stalled limit carries a deferred failure: BullMQ fails it without running it.
      if (job.deferredFailure)
        return await this.failed(new UnrecoverableError(job.deferredFailure), job, token, fetchNextCallback);
      const result = await this.handler(job, token, delivery, fetchNext);
      this.lockManager.untrackJob(job.id!);
      if (!result.transition) return await this.handleCompleted(result.outcome, job, token, fetchNextCallback);
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
      return await this.handOut(result.transition.handed, token, delivery.hops + 1);
    } catch (error) {
      return this.failed(error as Error, job, token, fetchNextCallback);
    } finally {
      this.lockManager.untrackJob(job.id!);
      this.lockKeeper?.releaseLock(lockKey);
    }
  }

  private async failed(
    error: Error,
    job: Job<StepJobData>,
    token: string,
    fetchNextCallback: () => boolean,
  ): Promise<void | Job<StepJobData>> {
    this.lockManager.untrackJob(job.id!);
    try {
      return await this.handleFailed(error, job, token, fetchNextCallback);
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
  private async handOut(handed: HandedJob | undefined, token: string, hops: number): Promise<Job<StepJobData>> {
    const [jobData, jobId, limitDelay, delayUntil] = (handed?.next ?? []) as [
      never,
      string | undefined,
      number,
      number,
    ];
    (this as unknown as WorkerInternals).updateDelays(limitDelay, delayUntil);
    const next = await this.nextJobFromJobData(jobData, jobId, token);
    if (next && handed)
      this.deliveries.set(next, { ...(handed.begin ? { begin: handed.begin } : {}), hops: handed.eager ? hops : 0 });
    return next;
  }
}
