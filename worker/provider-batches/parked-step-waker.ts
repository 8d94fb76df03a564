import { stepJobId } from '../../shared/contracts/job-schema.js';
import type { StepQueues } from '../../shared/store/step-queues.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { inGroups } from './in-groups.js';
import { parseCallId } from './provider-batch-call.js';

/** Steps woken at once (a few round trips each). */
const WAKES_AT_ONCE = 32;
/** How many ticks a wake-up of a step that was not parked yet is tried again. */
const RETRIES = 20;

/**
 * Wakes parked steps: a step parked on a provider batch is a delayed step job; once its
 * answer is saved it is promoted (BullMQ's public `Job.promote`) and runs at once. A step caught
 * between registering its call and being moved to the delayed set (still active) is tried again on the
 * next ticks; a wake-up lost anyway (the worker killed) is bounded by the park's delay.
 */
export class ParkedStepWaker {
  private readonly retrying = new Map<string, { queue: string; tries: number }>();

  constructor(
    private readonly queues: StepQueues,
    private readonly logger: Logger,
  ) {}

  /** Wakes the steps of these calls (custom ids); → how many were parked and are now promoted. */
  async wake(customIds: readonly string[]): Promise<number> {
    let woken = 0;
    const steps = new Map<string, string>();
    for (const customId of customIds) {
      const call = parseCallId(customId);
      if (call) steps.set(stepJobId(call.runId, call.superstep, call.task), call.runId);
    }
    await inGroups([...steps], WAKES_AT_ONCE, async ([jobId, runId]) => {
      if (await this.promote(runId, jobId)) woken += 1;
    });
    return woken;
  }

  /** Tries again the wake-ups that found their step still active. */
  async retry(): Promise<void> {
    for (const [jobId, entry] of [...this.retrying]) {
      entry.tries += 1;
      if (entry.tries > RETRIES) this.retrying.delete(jobId);
      else if (await this.promote(entry.queue, jobId, false)) this.retrying.delete(jobId);
    }
  }

  private async promote(runId: string, jobId: string, remember = true): Promise<boolean> {
    const job = await this.queues.forRun(runId).getJob(jobId);
    if (!job) return false;
    const state = await job.getState();
    if (state === 'delayed') {
      try {
        await job.promote();
        return true;
      } catch (error) {
        // Moved meanwhile (woken by its own delay, or taken): nothing to do.
        this.logger.debug({ jobId, err: String(error) }, 'provider batch: a parked step moved before its wake-up');
        return false;
      }
    }
    if (state === 'active' && remember) this.retrying.set(jobId, { queue: runId, tries: 0 });
    return false;
  }
}
