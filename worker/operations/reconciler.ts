import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { ErrorRecord } from '../../shared/contracts/errors.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { RedisRunStore, ReindexPosition } from '../../shared/store/redis-run-store.js';
import { isTerminal } from '../../shared/contracts/run-record.js';
import type { BatchDispatcher } from '../../shared/operations/batches/batch-dispatcher.js';
import { stepJobRun, type StepJobs } from '../engine/step-jobs.js';

interface ReconcilerOptions {
  store: RedisRunStore;
  stepJobs: StepJobs;
  intakeQueue: Queue;
  /** Batches are topped up and repaired in each sweep, when given. */
  batches?: BatchDispatcher;
  logger: Logger;
  /** How often one worker sweeps. */
  intervalMs: number;
  /** Runs updated more recently than this are left alone. */
  staleAfterMs: number;
  /** Keys each sweep scans for runs missing from their tenant's run list (0: none). @default 0 */
  reindexKeys?: number;
}

const CANCELLED: ErrorRecord = { code: 'CANCELLED', message: 'the run was cancelled on request', retryable: false };

export interface SweepReport {
  checked: number;
  requeued: number;
  cancelled: number;
  forgotten: number;
  /** Entries of expired runs dropped from the tenants' run lists. */
  trimmed: number;
  /** Runs put back in their tenant's run list, which had lost them. */
  reindexed: number;
}

/**
 * Finds runs that are unfinished but have no live job (a lost write, a job failed by the stalled
 * limit, a crash between enqueue steps) and hands them back to the workers. One worker sweeps at a
 * time (a Redis lock); the fence in every commit makes a needless re-enqueue harmless.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private readonly id = randomUUID();
  /** Where the run-list repair resumes: one bounded pass per sweep walks the keyspace, then starts over. */
  private reindexAt: ReindexPosition | null = null;

  constructor(private readonly options: ReconcilerOptions) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.sweepIfLeader()
        .catch((error: unknown) => this.options.logger.warn({ err: String(error) }, 'reconciler sweep failed'))
        .finally(() => (this.sweeping = undefined));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }

  private async sweepIfLeader(): Promise<SweepReport | undefined> {
    const { store, intervalMs } = this.options;
    const lock = await store.redis.set(store.keys.reconcilerLock(), this.id, 'PX', Math.max(intervalMs - 50, 50), 'NX');
    return lock === 'OK' ? this.sweep() : undefined;
  }

  /** One bounded pass of the run-list repair; a run a list had lost is worth a warning (something dropped it). */
  private async reindexPass(): Promise<number> {
    const { store, logger, reindexKeys = 0 } = this.options;
    if (reindexKeys <= 0) return 0;
    const pass = await store.indexRepair.pass(this.reindexAt, { count: reindexKeys });
    this.reindexAt = pass.next;
    if (pass.added > 0)
      logger.warn({ added: pass.added }, "reconciler: runs missing from their tenant's run list put back");
    return pass.added;
  }

  async sweep(now = Date.now()): Promise<SweepReport> {
    const { store, stepJobs, intakeQueue, logger, staleAfterMs } = this.options;
    const report: SweepReport = { checked: 0, requeued: 0, cancelled: 0, forgotten: 0, trimmed: 0, reindexed: 0 };
    // Retention expires a run's keys but not its entry in its tenant's list: drop those here.
    report.trimmed = await store.retention.trimTenantIndexes(now);
    report.reindexed = await this.reindexPass();
    for (const runId of await store.retention.activeRunIds()) {
      report.checked += 1;
      const meta = await store.reads.get(runId);
      if (!meta || isTerminal(meta.status)) {
        await store.retention.forgetActive(runId);
        report.forgotten += 1;
        continue;
      }
      if (meta.status === 'waiting' || now - meta.updatedAt < staleAfterMs) continue;
      if (meta.tasks === null) {
        // Created but never taken in. A live start job (`{runId}.s0.t0`, e.g. behind a backlog) will take
        // it in; without one, hand it to the intake again (its job id is the run id).
        if ((await stepJobs.liveCount(runId, 0, 1)) > 0) continue;
        const existing = await intakeQueue.getJob(runId);
        const state = existing ? await existing.getState() : 'missing';
        if (state === 'failed' || state === 'completed' || state === 'unknown')
          await existing?.remove().catch(() => undefined);
        if (state === 'failed' || state === 'completed' || state === 'unknown' || state === 'missing') {
          await intakeQueue.add(
            'run',
            { v: 1, stored: true, runId },
            { jobId: runId, attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true },
          );
          report.requeued += 1;
          // A conversation's turn or a concurrency key's run waiting for its slot is expected here (it checks again).
          (meta.conversationId || meta.concurrency ? logger.debug.bind(logger) : logger.warn.bind(logger))(
            { runId },
            'reconciler: run was never taken in; re-sent to the intake',
          );
        }
        continue;
      }
      const done = new Set((await store.commits.writes(runId)).keys());
      if (meta.status === 'cancelling') {
        // Nothing left to run it: end it here.
        const live = await stepJobs.liveCount(runId, meta.superstep, meta.tasks.length);
        if (
          live === 0 &&
          (await store.lifecycle.finish(runId, 'cancelled', CANCELLED, now, {
            onlyFrom: 'cancelling',
            superstep: meta.superstep,
          })) === 'ok'
        ) {
          report.cancelled += 1;
        }
        continue;
      }
      // Every write stored but no advance (a crash between the last task's commit and the advance): one
      // job of the superstep again, whose BEGIN answers 'written' and advances.
      if (done.size >= meta.tasks.length) done.delete(0);
      const added = await stepJobs.ensure(stepJobRun(meta), meta.superstep, meta.tasks, done);
      if (added > 0) {
        report.requeued += 1;
        logger.warn({ runId, superstep: meta.superstep, added }, 'reconciler: run had no live step job; re-enqueued');
      }
    }
    if (this.options.batches) {
      for (const batchId of await this.options.batches.activeBatchIds()) {
        await this.options.batches
          .repair(batchId)
          .catch((error: unknown) => logger.warn({ batchId, err: String(error) }, 'reconciler: batch repair failed'));
      }
    }
    return report;
  }
}
