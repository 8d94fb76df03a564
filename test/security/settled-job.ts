import type { Job, Queue } from 'bullmq';
import { eventually } from '../helpers/test-env.js';

/**
 * The job once BullMQ has marked it finished (failed or completed). A worker fails the run before
 * BullMQ moves the job, so tests read the job state until BullMQ has counted its last attempt.
 */
export async function settledJob(
  queue: Queue,
  jobId: string,
  timeoutMs = 30_000,
): Promise<{ job: Job; state: 'failed' | 'completed' }> {
  return eventually(
    async () => {
      const state = await queue.getJobState(jobId);
      if (state !== 'failed' && state !== 'completed') return undefined;
      // Read after the state is final: a job read before could still show the attempt count of before.
      const job = await queue.getJob(jobId);
      return job ? { job, state } : undefined;
    },
    timeoutMs,
    `job ${jobId} of ${queue.name} to finish`,
  );
}
