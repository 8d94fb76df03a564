import type { RunMeta, StartSlot } from '../../store/redis-run-store.js';

/**
 * A worker's slot, offered by the step whose run just freed a batch's slot: the batch's next question's
 * start job is taken into it as its run is created (`taken`: the job as BullMQ's fetch replies, and the
 * run as created), for that worker to run at once instead of leaving it to the queue.
 */
export interface SlotOffer {
  slot: StartSlot;
  taken?: { job: unknown[]; meta: RunMeta };
}
