import { nextJobData } from '../../shared/bullmq/bullmq-jobs.js';
import { isBatchRunId } from '../../shared/contracts/ids.js';
import type { SlotOffer } from '../../shared/operations/batches/slot-offer.js';
import type { FinishingJob, HandedJob, TransitionResult } from './step-transitions.js';

/**
 * Eager starts: the step that ends a batch's run offers its job's slot to the batch's next question. The
 * run's finish hook (BatchDispatcher.onRunFinished, as the commit runs it) creates that question's run
 * with its start job taken into the slot (active, locked with the step's token), and the step hands the
 * job back to its worker as a transition hands the run's next step: it runs in the same slot at once,
 * instead of waiting in the queue for a worker to take it (a round trip, a wake-up and a take later).
 * A worker that dies before running it leaves a locked job, which BullMQ's stalled-job check gives to
 * another worker; one that dies before the run was created leaves a claimed item, which the reconciler's
 * `repair` starts.
 */
export class EagerStarts {
  private readonly offers = new Map<string, SlotOffer>();

  constructor(
    private readonly options: {
      /** The lock a start job is taken with (as a transition's hand-out: AGENTQ_TAKE_LOCK_MS). */
      lockDurationMs: number;
      workerName?: string;
      /** Eager dispatch's switch (AGENTQ_EAGER_HOPS): 0 turns eager starts off too. */
      eagerHops: number;
      /** The key prefix of a run's step queue (its shard's): a slot takes only a start job of its own queue. */
      queuePrefixOf: (runId: string) => string;
    },
  ) {}

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
