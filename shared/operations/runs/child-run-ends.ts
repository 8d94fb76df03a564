import { isChildRunId } from '../../contracts/ids.js';
import { stepJobId } from '../../contracts/job-schema.js';
import type { ChildLinks } from '../../store/child-links.js';
import type { RedisRunStore } from '../../store/redis-run-store.js';
import type { StepQueues } from '../../store/step-queues.js';
import type { Logger } from '../../telemetry/logger.js';

interface ChildRunEndsOptions {
  store: RedisRunStore;
  links: ChildLinks;
  stepQueues: StepQueues;
  logger?: Logger;
}

/**
 * What a run's end means for its family (the run-finished hook): a child's end is counted in its
 * parent, and the parent's waiting step is woken when it was the last child it waited on; a cancelled
 * parent cancels the children its steps still wait on (children started with `wait: false` go on).
 */
export class ChildRunEnds {
  constructor(private readonly options: ChildRunEndsOptions) {}

  async onFinished(runId: string, status: 'completed' | 'failed' | 'cancelled'): Promise<void> {
    await Promise.all([
      isChildRunId(runId) ? this.wakeParent(runId) : undefined,
      status === 'cancelled' ? this.cancelChildren(runId) : undefined,
    ]);
  }

  private async wakeParent(childId: string): Promise<void> {
    const { store, links } = this.options;
    const [parentRunId, waits] = await store.redis.hmget(store.keys.run(childId).meta, 'parentRunId', 'parentWaits');
    if (!parentRunId || waits !== '1') return;
    const settled = await links.settle(parentRunId, childId);
    // Counted already (the parent's step found the end first), or other children are still running.
    if (!settled || settled.left > 0) return;
    await this.promote(parentRunId, settled.step);
  }

  /**
   * Wakes a parked step. One still active is parking right now: it looks at its count itself once parked
   * (ParkSignal.arrived); a wake-up lost anyway (the worker killed) waits for AGENTQ_CHILD_RUN_PARK_MS.
   */
  private async promote(runId: string, stepId: string): Promise<void> {
    const [superstep, task] = stepId.slice(1).split('.t').map(Number);
    const job = await this.options.stepQueues.forRun(runId).getJob(stepJobId(runId, superstep ?? 0, task ?? 0));
    if (!job || (await job.getState()) !== 'delayed') return;
    await job.promote().catch((error: unknown) => {
      // Moved meanwhile (woken by its own delay, or taken): nothing to do.
      this.options.logger?.debug({ runId, stepId, err: String(error) }, 'a parked parent moved before its wake-up');
    });
  }

  /** A cancelled run's awaited children are cancelled too (and theirs, through their own ends). */
  private async cancelChildren(parentRunId: string): Promise<void> {
    const { store, links } = this.options;
    const children = await links.awaited(parentRunId);
    for (const childId of children) {
      const status = await store.lifecycle.requestCancel(childId, Date.now());
      // A child whose step waits in the queue or parked has no node to abort: woken now, it ends at once.
      if (status === 'cancelling') await this.wakeSteps(childId);
    }
  }

  private async wakeSteps(runId: string): Promise<void> {
    const meta = await this.options.store.reads.get(runId);
    for (let task = 0; task < (meta?.tasks?.length ?? 0); task += 1)
      await this.promote(runId, `s${meta!.superstep}.t${task}`);
  }
}
