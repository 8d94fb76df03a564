import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { closedLoop } from './closed-loop.js';
import type { ForkedWorker } from './forked-worker.js';

/** One job of a plain BullMQ chain (bench/workers/bullmq-*chain-worker.ts): which chain, where in it, how long. */
export interface ChainLink {
  chain: string;
  index: number;
  length: number;
}

const KEEP = { removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } };

/** What a chain job does last: adds the chain's next job, or says (false) that it was the chain's last. */
export async function addNextLink(queue: Queue, { chain, index, length }: ChainLink): Promise<boolean> {
  if (index + 1 >= length) return false;
  await queue.add('link', { chain, index: index + 1, length }, { jobId: `${chain}.${index + 1}`, ...KEEP });
  return true;
}

/**
 * A closed loop of chains of `length` jobs on `queue`, run by `worker` (which reports each chain's end):
 * `inFlight` at once until `total` have ended. → elapsed ms.
 */
export function chainLoop(
  worker: ForkedWorker,
  queue: Queue,
  { inFlight, total, length }: { inFlight: number; total: number; length: number },
): Promise<number> {
  const tag = randomBytes(3).toString('hex');
  const loop = closedLoop(inFlight, total, async (index) => {
    await queue.add('link', { chain: `${tag}-${index}`, index: 0, length }, { jobId: `${tag}-${index}.0`, ...KEEP });
  });
  worker.onFinished(() => loop.finished());
  return Promise.race([loop.done, worker.failed]);
}
