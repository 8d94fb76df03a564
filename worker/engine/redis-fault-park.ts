import { DelayedError, type Job } from 'bullmq';
import { redisFaultOf, type RedisFaultKind } from '../../shared/redis/redis-fault.js';
import type { StepJobData } from '../../shared/contracts/job-schema.js';
import type { WarningGate } from '../../shared/telemetry/warning-gate.js';

/**
 * A step that met a Redis fault (full, read-only, loading, master down, connection lost) did
 * nothing wrong; spending its attempts on it failed runs whose nodes never failed (attempt 7 and 8 of a
 * 5-attempt step). It is parked instead: moved to the delayed set for `delayMs` without counting an
 * attempt — BullMQ's moveToDelayed deletes the lock first, a write Redis allows when full, so the move
 * lands even then. When even that fails, its lock is left to lapse (the liveness thread no longer renews
 * it) and the stalled-job check hands the job back within seconds, still without an attempt.
 * → never returns: throws DelayedError, BullMQ's signal for a job moved on purpose.
 */
export async function parkOnRedisFault(
  job: Job<StepJobData>,
  token: string | undefined,
  error: unknown,
  { delayMs, warnings }: { delayMs: number; warnings?: WarningGate },
): Promise<never> {
  const kind: RedisFaultKind = redisFaultOf(error) ?? 'unavailable';
  const message = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 160) : String(error);
  warnings?.warn(
    `step parked: Redis ${kind}`,
    { runId: job.data.runId, superstep: job.data.superstep, task: job.data.task, err: message, delayMs },
    `step parked: Redis is ${kind === 'full' ? 'full' : 'unavailable'}; retried in ${delayMs} ms without spending an attempt`,
  );
  await job.moveToDelayed(Date.now() + delayMs, token).catch(() => undefined);
  throw new DelayedError();
}

/** Whether `error` is a Redis fault that parks a step rather than spending its attempt. */
export function parksStep(error: unknown): boolean {
  return redisFaultOf(error) !== undefined;
}
