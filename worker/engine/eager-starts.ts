import type { Config } from '../../shared/config/config.js';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { Keys } from '../../shared/store/keys.js';
import type { StepQueues } from '../../shared/store/step-queues.js';
import type { ActiveSteps } from './active-steps.js';
import { nextJobData } from '../../shared/bullmq/bullmq-jobs.js';
import { isBatchRunId } from '../../shared/contracts/ids.js';
import type { SlotOffer } from '../../shared/operations/batches/slot-offer.js';
import { batchRunParts } from '../../shared/operations/batches/batch-meta.js';
import type { FinishingJob, HandedJob, TransitionResult } from './step-transitions.js';

/**
 * Eager starts: the step that ends a batch's run offers its job's slot to the batch's next question. The
 * run's finish hook (BatchDispatcher.onRunFinished, as the commit runs it) creates that question's run
 * with its start job taken into the slot (active, locked with the step's token), and the step hands the
 * job back to its worker as a transition hands the run's next step: it runs in the same slot at once,
 * instead of waiting in the queue for a worker to take it (a round trip, a wake-up and a take later).
 * A worker that dies before running it leaves a locked job, which BullMQ's stalled-job check gives to
 * another worker; one that dies before the run was created leaves a claimed item, which the reconciler's
 * `repair` starts. A worker holding its share of the batch already leaves the question to the queue
 * (withinShare), so the batch's runs spread over the workers alive.
 */
/** How long a count of the worker processes alive is used before it is read again. */
const WORKERS_TTL_MS = 5000;

export class EagerStarts {
  private readonly offers = new Map<string, SlotOffer>();
  private workers: { count: number; readAt: number } | undefined;
  private counting = false;

  constructor(
    private readonly options: {
      /** The lock a start job is taken with (as a transition's hand-out: AGENTQ_TAKE_LOCK_MS). */
      lockDurationMs: number;
      workerName?: string;
      /** Eager dispatch's switch (AGENTQ_EAGER_HOPS): 0 turns eager starts off too. */
      eagerHops: number;
      /** The key prefix of a run's step queue (its shard's): a slot takes only a start job of its own queue. */
      queuePrefixOf: (runId: string) => string;
      /** The runs with a step running in this worker: what it holds of a batch (its share, withinShare). */
      activeSteps?: { runsWith(prefix: string, except?: string): number };
      /** The worker processes alive (the liveness registry); without it (or before it answers) no share is kept. */
      countWorkers?: () => Promise<number>;
    },
  ) {
    this.refreshWorkers();
  }

  /** The last count of the workers alive, read again in the background once it is WORKERS_TTL_MS old. */
  private workersAlive(): number | undefined {
    if (!this.workers || Date.now() - this.workers.readAt > WORKERS_TTL_MS) this.refreshWorkers();
    return this.workers?.count;
  }

  private refreshWorkers(): void {
    const { countWorkers } = this.options;
    if (!countWorkers || this.counting) return;
    this.counting = true;
    countWorkers().then(
      (count) => {
        this.workers = { count, readAt: Date.now() };
        this.counting = false;
      },
      () => {
        // A failed read keeps the last count (or none: every slot takes its question, as before shares).
        this.counting = false;
      },
    );
  }

  /** The offer of the step ending run `runId`, for its finish hook to pass on; undefined when none. */
  offerOf(runId: string): SlotOffer | undefined {
    return this.offers.get(runId);
  }

  /**
   * Offers the slot of `job`, a step of run `runId` after which the run has no task (`ends`), while its
   * commit's finish hooks run: the commit then fetches no job from the queue (the slot is the batch's next
   * question's). → how to settle the commit: its transition, with the start job taken into the slot as the
   * job it hands out; undefined when nothing is offered.
   */
  offer(
    runId: string,
    job: FinishingJob,
    ends: boolean,
  ): ((commit: Promise<TransitionResult>) => Promise<TransitionResult>) | undefined {
    if (!ends || !job.fetchNext || !job.token || this.options.eagerHops <= 0 || !isBatchRunId(runId)) return undefined;
    const offer: SlotOffer = {
      slot: {
        token: job.token,
        lockDurationMs: this.options.lockDurationMs,
        workerName: this.options.workerName ?? '',
        queuePrefix: this.options.queuePrefixOf(runId),
      },
    };
    const workers = this.workersAlive();
    if (workers !== undefined && this.options.activeSteps)
      offer.share = {
        held: this.options.activeSteps.runsWith(batchRunParts(runId).prefix, runId),
        workers,
      };
    job.fetchNext = false;
    this.offers.set(runId, offer);
    return async (commit) => {
      try {
        const transition = await commit;
        if (!offer.taken || transition.handed || transition.finishCode < 0) return transition;
        return { ...transition, handed: startJobHanded(offer.taken) };
      } finally {
        this.offers.delete(runId);
      }
    };
  }
}

/** A start job taken into a slot, as a transition hands a job out: its BEGIN is the run as just created ('admit'). */
function startJobHanded({ job, meta }: NonNullable<SlotOffer['taken']>): HandedJob {
  return { next: nextJobData(job), begin: { kind: 'admit', meta }, eager: true, started: true };
}

/** A worker's EagerStarts: its take lock and eager-hop setting, its shard's queues, its running steps and the workers alive. */
export function workerEagerStarts({
  config,
  stepQueues,
  activeSteps,
  redis,
  keys,
}: {
  config: Pick<Config, 'takeLockMs' | 'eagerHops'>;
  stepQueues: Pick<StepQueues, 'keyPrefixFor'>;
  activeSteps: ActiveSteps;
  redis: RedisConnection;
  keys: Keys;
}): EagerStarts {
  return new EagerStarts({
    lockDurationMs: config.takeLockMs,
    eagerHops: config.eagerHops,
    queuePrefixOf: (runId) => stepQueues.keyPrefixFor(runId),
    activeSteps,
    countWorkers: () => redis.scard(keys.livenessRegistry()),
  });
}
