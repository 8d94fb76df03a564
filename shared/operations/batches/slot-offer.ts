import type { RunMeta, StartSlot } from '../../store/redis-run-store.js';

/**
 * A worker's slot, offered by the step whose run just freed a batch's slot: the batch's next question's
 * start job is taken into it as its run is created (`taken`: the job as BullMQ's fetch replies, and the
 * run as created), for that worker to run at once instead of leaving it to the queue.
 */
export interface SlotOffer {
  slot: StartSlot;
  taken?: { job: unknown[]; meta: RunMeta };
  /**
   * The offering worker's share of the batch, when it knows one: the batch's other runs with a step
   * running in it (`held`) and the worker processes alive (`workers`). See `withinShare`.
   */
  share?: { held: number; workers: number };
}

/**
 * Whether the offered slot may take the batch's next question. A slot that always took it would keep the
 * batch's runs on the workers that happened to take its first wave from the queue (a 16/4 split of 20 slots
 * was measured on two workers): one event loop then does most of the batch's work while another idles, and
 * every step of its runs waits behind the others'. So a worker already holding its even share of the
 * batch's concurrency leaves the question to the queue, where an idle worker (blocked on the queue's
 * marker) takes it first. Nothing else changes: the run is admitted and created the same way either way.
 */
export function withinShare(offer: SlotOffer, concurrency: number): boolean {
  if (!offer.share || offer.share.workers <= 1) return true;
  return offer.share.held < Math.ceil(concurrency / offer.share.workers);
}
