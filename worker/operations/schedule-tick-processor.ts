import { UnrecoverableError, type Job } from 'bullmq';
import { AgentqError, type ErrorCode } from '../../shared/contracts/errors.js';
import { runIdForScheduleTick } from '../../shared/contracts/ids.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { RunEnqueuer } from '../../shared/operations/runs/run-enqueuer.js';
import { tickTimeOf, type Schedules, type ScheduleTickData } from '../../shared/operations/schedules/schedules.js';

/** What TenantAdmission refuses with: a tick refused so is skipped, not retried. */
const REFUSALS = new Set<ErrorCode>(['RATE_LIMITED', 'STORAGE_BUDGET_EXCEEDED']);

/** A schedule whose ticks are refused warns at most once in this long, with the count it skipped since. */
export const SKIPPED_TICK_WARNING_MS = 60_000;

interface ScheduleTickProcessorOptions {
  schedules: Schedules;
  enqueuer: RunEnqueuer;
  logger: Logger;
  /** @default Date.now */
  now?: () => number;
}

/** A schedule's last warning of a skipped tick, and the ticks skipped since without a line of their own. */
interface SkipWarning {
  at: number;
  quiet: number;
}

/**
 * Turns a schedule's tick job into the run it stands for. The tick's time is in the job id BullMQ gives
 * each tick (`repeat:<scheduleId>:<ms>`), and the run id is derived from it: a tick job that runs again
 * (its worker died after the run was created; BullMQ's stall check hands it on) finds that run and adds
 * nothing. The definition is read at the tick, so a change applies from the next tick on; a tick of a
 * schedule paused or deleted since it was queued starts nothing.
 */
export class ScheduleTickProcessor {
  private readonly warned = new Map<string, SkipWarning>();

  constructor(private readonly options: ScheduleTickProcessorOptions) {}

  process = async (job: Job<ScheduleTickData>): Promise<string> => {
    const { schedules, enqueuer, logger } = this.options;
    const { tenant, scheduleId } = job.data ?? {};
    const tickAt = tickTimeOf(job.id);
    if (typeof tenant !== 'string' || typeof scheduleId !== 'string' || tickAt === undefined) {
      throw new UnrecoverableError(
        `job ${job.id ?? '?'} of the schedules queue is not a schedule tick (agentq adds these itself; do not add jobs to this queue)`,
      );
    }
    const definition = await schedules.definition(tenant, scheduleId);
    if (!definition) return 'deleted';
    if (definition.paused) return 'paused';
    const { spec } = definition;
    const runId = runIdForScheduleTick(tenant, scheduleId, tickAt);
    let created: boolean;
    try {
      ({ created } = await enqueuer.enqueue(
        {
          graph: spec.graph,
          ...(spec.graphVersion === undefined ? {} : { graphVersion: spec.graphVersion }),
          input: spec.input,
          tenant,
          ...(spec.options === undefined ? {} : { options: spec.options }),
          ...(spec.priority === undefined ? {} : { priority: spec.priority }),
          ...(spec.debounce === undefined ? {} : { debounce: spec.debounce }),
          ...(spec.throttle === undefined ? {} : { throttle: spec.throttle }),
          ...(spec.concurrency === undefined ? {} : { concurrency: spec.concurrency }),
        },
        { runId, scheduleId, origin: 'schedule', ...(definition.keyId ? { keyId: definition.keyId } : {}) },
      ));
    } catch (error) {
      // Refused by the admission every run passes (the creator key's rate limit, the tenant's in-flight
      // cap or storage budget): this tick starts nothing, as a cron job skips a tick its host missed.
      if (!AgentqError.isInstance(error) || !REFUSALS.has(error.code)) throw error;
      this.warnSkipped({ scheduleId, tenant, runId, tickAt, error });
      return `skipped: ${error.code}`;
    }
    await schedules.recordTick(tenant, scheduleId, runId, tickAt);
    logger.info(
      { scheduleId, tenant, runId, scheduledFor: new Date(tickAt).toISOString(), created },
      created ? 'schedule tick started a run' : 'schedule tick found its run (tick job ran again)',
    );
    return runId;
  };

  /**
   * A refused tick's warning, once per schedule per SKIPPED_TICK_WARNING_MS: a schedule ticking every
   * second against a full tenant would otherwise write a line a second. The ticks in between are debug
   * lines, and the next warning says how many there were.
   */
  private warnSkipped({
    scheduleId,
    tenant,
    runId,
    tickAt,
    error,
  }: {
    scheduleId: string;
    tenant: string;
    runId: string;
    tickAt: number;
    error: AgentqError;
  }): void {
    const { logger } = this.options;
    const now = (this.options.now ?? Date.now)();
    const fields = {
      scheduleId,
      tenant,
      runId,
      scheduledFor: new Date(tickAt).toISOString(),
      code: error.code,
      reason: error.message,
    };
    const last = this.warned.get(`${tenant}/${scheduleId}`);
    if (last && now - last.at < SKIPPED_TICK_WARNING_MS) {
      last.quiet += 1;
      logger.debug(fields, 'schedule tick skipped: its run was refused');
      return;
    }
    // Entries of schedules that stopped being refused go once their interval is over.
    for (const [key, entry] of this.warned) if (now - entry.at >= SKIPPED_TICK_WARNING_MS) this.warned.delete(key);
    this.warned.set(`${tenant}/${scheduleId}`, { at: now, quiet: 0 });
    logger.warn(
      { ...fields, ...(last ? { skippedSinceLastWarning: last.quiet } : {}) },
      `schedule tick skipped: its run was refused (further refusals of this schedule are logged at most once in ${SKIPPED_TICK_WARNING_MS / 1000} s)`,
    );
  }
}
