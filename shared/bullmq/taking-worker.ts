import { AsyncFifoQueue, SpanKind, Worker, type Job, type WorkerOptions } from 'bullmq';
import { jobLockKey } from './bullmq-jobs.js';

/**
 * The members of BullMQ's Worker that TakingWorker reaches and BullMQ's types keep private (pinned to
 * BULLMQ_VERSION; shared/bullmq/README.md lists each with its guard). Not exported: no code outside this
 * file can name them, and `npm run lint` forbids re-declaring them elsewhere.
 */
interface WorkerInternals<D> {
  updateDelays(limitDelay?: number, delayUntil?: number): void;
  mainLoop(): Promise<void>;
  mainLoopQueue: AsyncFifoQueue<void | Job<D>> | null;
  waiting: Promise<number> | null;
  drained: boolean;
  blockUntil: number;
  isRateLimited(): boolean;
  waitForRateLimit(): Promise<void>;
  retryIfFailed<T>(fn: () => Promise<T>, options: { delayInMs?: number; onlyEmitError?: boolean }): Promise<T>;
  _getNextJob(token: string, options: { block: boolean }): Promise<Job<D> | undefined>;
}

/** sha1 of the source of BullMQ's Worker.prototype.mainLoop, which TakingWorker's own loop copies (bullmq 6.7.0). */
export const BULLMQ_MAIN_LOOP_SHA1 = 'd2b79426bfbba368fe1ca1673b63c15dd08673e7';

/** The source of the installed BullMQ's Worker.prototype.mainLoop (undefined when it has none): what the guard test hashes. */
export function bullmqMainLoopSource(): string | undefined {
  const mainLoop = (Worker.prototype as unknown as Partial<WorkerInternals<unknown>>).mainLoop;
  return typeof mainLoop === 'function' ? mainLoop.toString() : undefined;
}

/**
 * A BullMQ Worker whose jobs are taken by scripts of its subclass's own, many per round trip, and handed
 * back by them (a fetch-next of the subclass's making), BullMQ's blocking wait, lock bookkeeping and
 * stalled-job checks kept. Everything it does beyond BullMQ's public API is here, behind a small protected
 * API for the subclass:
 *  - `takeJobs` (the subclass's): up to `count` jobs in one round trip, each made a Job by `handOut`;
 *  - `handOut`: a job a script handed out, as BullMQ's scripts reply (`[job JSON, id, rate-limit delay,
 *    delay until]`, nextJobData), made a Job; the queue's delays (and drained, when none) updated from it;
 *  - `lockKeyOf`, `trackLock` / `untrackLock`: a job's lock key and BullMQ's lock bookkeeping of it;
 *  - `completeJob` / `failJob`: BullMQ's own completion and failure paths (moveToFinished);
 *  - `traceProcessing`: BullMQ's own 'process' span (bullmq-otel) around a job's work.
 * The processor given to BullMQ is never called: the subclass's `processJob` runs each job.
 */
export abstract class TakingWorker<D> extends Worker<D> {
  constructor(
    name: string,
    options: WorkerOptions,
    /** Jobs one take asks for at most, however many slots are free. */
    private readonly takeBatchMax: number,
  ) {
    super(name, async () => undefined, { ...options, autorun: false });
    // BullMQ's main loop is a private method: this instance's own takes its place (run() calls it).
    (this as unknown as WorkerInternals<D>).mainLoop = () => this.takingMainLoop();
  }

  /** Up to `count` jobs (each locked with a token of its own, the first with `token`), made Jobs by `handOut`. */
  protected abstract takeJobs(token: string, count: number, name?: string): Promise<Job<D>[]>;

  /**
   * BullMQ's main loop (Worker.mainLoop of BULLMQ_VERSION; test/unit/bullmq-functions.test.ts fails when
   * an upgrade changes it) with one change: while the queue is not drained and more than one slot is free,
   * the free slots are filled by `takeJobs` (up to takeBatchMax jobs) instead of one moveToActive round trip
   * each. BullMQ's loop fetches in sequence and starts the fetched jobs only once every free slot has been
   * fetched for; when 100 runs finish together (a batch's wave, a burst of enqueues), their successors
   * waited ~30 ms of round trips before the first of them started (`npm run bench:steps -- --compare`,
   * five runs before and after in turns: engine_vs_bullmq_chain_r100 median 0.80 → 0.90, together with the
   * eager hops of StepWorker.processJob). A drained queue still goes through BullMQ's own blocking fetch.
   */
  private async takingMainLoop(): Promise<void> {
    const internals = this as unknown as WorkerInternals<D>;
    const fifo = new AsyncFifoQueue<void | Job<D>>();
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
          const taken = await internals.retryIfFailed(
            () => this.takeJobs(token, Math.min(free, this.takeBatchMax), this.opts.name),
            { delayInMs: this.opts.runRetryDelay, onlyEmitError: true },
          );
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
      let job: void | Job<D>;
      do {
        job = await fifo.fetch();
      } while (!job && fifo.numQueued() > 0);
      if (job) fifo.add(this.processJob(job, job.token!, () => fifo.numTotal() <= this.concurrency));
      else if (fifo.numQueued() === 0) await internals.waitForRateLimit();
    }
    if (internals.mainLoopQueue === fifo) internals.mainLoopQueue = null;
  }

  /** BullMQ's own fetch (its blocking wait's, once a job is there) is a take of one job. */
  protected override async moveToActive(token: string, name?: string): Promise<Job<D>> {
    const [job] = await this.takeJobs(token, 1, name);
    // Undefined when the queue ran dry, as BullMQ's own moveToActive returns (its type says Job).
    return job!;
  }

  /**
   * A job a script handed out (`[job JSON, id, rate-limit delay, delay until]`, nextJobData; empty: none),
   * made a Job locked with `token`, as BullMQ's fetch-next does; the delays it carries go to the loop.
   * → undefined when it carries no job (the queue ran dry: the worker is then drained).
   */
  protected async handOut(next: unknown[] | undefined, token: string): Promise<Job<D> | undefined> {
    const [jobData, jobId, limitDelay, delayUntil] = (next ?? []) as [never, string | undefined, number, number];
    (this as unknown as WorkerInternals<D>).updateDelays(limitDelay, delayUntil);
    return this.nextJobFromJobData(jobData, jobId, token);
  }

  /** The key of job `jobId`'s lock (what a lock keeper renews). */
  protected lockKeyOf(jobId: string): string {
    return jobLockKey(this.toKey(jobId));
  }

  /** BullMQ's bookkeeping of a job this worker holds (its lock renewal, unless skipLockRenewal). */
  protected trackLock(jobId: string, token: string, processedOn: number): void {
    this.lockManager.trackJob(jobId, token, processedOn, false);
  }

  protected untrackLock(jobId: string): void {
    this.lockManager.untrackJob(jobId);
  }

  /** BullMQ's completion of a job (moveToFinished, fetch-next when `fetchNext` says so). → the next job, if fetched. */
  protected completeJob(
    result: unknown,
    job: Job<D>,
    token: string,
    fetchNext: () => boolean,
  ): Promise<Job<D> | undefined> {
    return this.handleCompleted(result, job, token, fetchNext);
  }

  /** BullMQ's failure of a job (a retry with backoff, or failed). → the next job, if fetched. */
  protected failJob(error: Error, job: Job<D>, token: string, fetchNext: () => boolean): Promise<Job<D> | undefined> {
    return this.handleFailed(error, job, token, fetchNext);
  }

  /** `work` inside BullMQ's own 'process' span of this worker's queue (bullmq-otel). */
  protected traceProcessing<T>(work: () => Promise<T>): Promise<T> {
    return this.trace(SpanKind.CONSUMER, 'process', this.name, work) as Promise<T>;
  }
}
