import type { StepJob } from './step-attempt.js';
import type { FinishingJob } from './step-transitions.js';

/** A committed step job's return value, as BullMQ keeps it (JSON). */
const COMMITTED = JSON.stringify('committed');

/**
 * The job a committed step's script finishes, and what this worker asks back: the queue's next job, or the
 * run's next step eagerly (a single next task, fewer than `eagerHops` hops in a row).
 */
export function finishingJob(at: StepJob, singleNext: boolean, eagerHops: number): FinishingJob {
  const { job, token, delivery, fetchNext } = at;
  const more = fetchNext();
  return {
    id: job.id!,
    token: token ?? '',
    attempts: job.opts.attempts ?? 1,
    attemptsMade: job.attemptsMade,
    fetchNext: more,
    eager: more && singleNext && delivery.hops < eagerHops,
    returnValue: COMMITTED,
  };
}
