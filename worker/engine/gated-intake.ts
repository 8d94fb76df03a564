import { createHash } from 'node:crypto';
import type { Job } from 'bullmq';
import type { Config } from '../../shared/config/config.js';
import { ID_PATTERN, isDerivedRunId, runIdForIdempotencyKey } from '../../shared/contracts/ids.js';
import { runJobSchema, runRequestProblem } from '../../shared/contracts/job-schema.js';
import { RunEnqueuer } from '../../shared/operations/runs/run-enqueuer.js';
import type { TenantAdmissionConfig } from '../../shared/operations/runs/tenant-admission.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { StepQueues } from '../../shared/store/step-queues.js';

/** The run id of a raw intake job: its own runId, its idempotency key's, or one derived from the job. */
export function rawJobRunId(job: Job, raw: Record<string, unknown>, tenant: string): string {
  // A runId in agentq's namespace is refused by the schema; its failed run must not take that id either.
  if (typeof raw.runId === 'string' && ID_PATTERN.test(raw.runId) && !isDerivedRunId(raw.runId)) return raw.runId;
  if (typeof raw.idempotencyKey === 'string' && ID_PATTERN.test(raw.idempotencyKey))
    return runIdForIdempotencyKey(tenant, raw.idempotencyKey);
  // Deterministic, so a retried intake job finds the run its first attempt created.
  return `run_j${createHash('sha256')
    .update(`${job.queueName}\0${job.id ?? ''}`)
    .digest('hex')
    .slice(0, 31)}`;
}

export interface GatedIntakeOptions {
  store: RedisRunStore;
  stepQueues: StepQueues;
  config: Pick<Config, 'tenant' | 'defaultMaxSteps' | 'defaultDeadlineMs'> & Partial<TenantAdmissionConfig>;
}

/**
 * A raw job with a debounce or throttle is enqueued as a client's request is (RunEnqueuer: the same
 * gate, a delayed start job), not taken in at once; → its run's id, or undefined for any other job (an
 * invalid one too: the intake fails its run with the reason as for every invalid job).
 */
export async function enqueueGatedJob(job: Job, options: GatedIntakeOptions): Promise<string | undefined> {
  const parsed = runJobSchema.safeParse(job.data);
  if (!parsed.success || (!parsed.data.debounce && !parsed.data.throttle) || runRequestProblem(parsed.data))
    return undefined;
  const { v: _version, ...request } = parsed.data;
  const tenant = request.tenant ?? options.config.tenant;
  const enqueuer = new RunEnqueuer(options.store, options.stepQueues, options.config);
  const runId = rawJobRunId(job, parsed.data, tenant);
  const { record } = await enqueuer.enqueueValid({ ...request, tenant }, { runId, origin: 'raw-job' });
  return record.id;
}
