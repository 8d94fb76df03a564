import type { Queue } from 'bullmq';
import type { z } from 'zod';
import type { Config } from './config.js';
import { AgentqError } from './errors.js';
import { newRunId, runIdForIdempotencyKey } from './ids.js';
import { formatZodError, runJobSchema, type StoredRunJob } from './job-schema.js';
import { toRunRecord, type RedisRunStore, type RunMeta } from './redis/redis-run-store.js';
import type { RunRecord } from './run-record.js';

/** What a producer asks for. Same fields as job schema v1 (DESIGN §4), without `v`. */
export const enqueueRequestSchema = runJobSchema.omit({ v: true });
export type EnqueueRequest = z.input<typeof enqueueRequestSchema>;

export const INTAKE_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { count: 5000 },
} as const;

export interface EnqueueExtras {
  /** The batch this run answers an item of. */
  batchId?: string;
}

/**
 * Creates a run (status `queued`) and hands it to the workers through the intake queue. Used by the
 * client library, the HTTP API and the batch dispatcher alike, so every run starts the same way.
 */
export class RunEnqueuer {
  constructor(
    private readonly store: RedisRunStore,
    private readonly intakeQueue: Queue,
    private readonly config: Pick<Config, 'tenant' | 'defaultMaxSteps' | 'defaultDeadlineMs'>,
    /**
     * A worker's own intake, for runs a worker enqueues (a batch's next question): it takes the run in
     * at once instead of through the intake queue, a hop less. → false when it cannot (this worker
     * lacks the graph); the run then goes through the queue like any other.
     */
    private readonly admitInline?: (meta: RunMeta) => Promise<boolean>,
  ) {}

  async enqueue(request: EnqueueRequest, extras: EnqueueExtras = {}): Promise<{ record: RunRecord; created: boolean; meta: RunMeta }> {
    const parsed = enqueueRequestSchema.safeParse(request);
    if (!parsed.success) throw new AgentqError('INVALID_INPUT', `invalid run request: ${formatZodError(parsed.error)}`, { details: parsed.error.issues });
    const data = parsed.data;
    const tenant = data.tenant ?? this.config.tenant;
    const runId = data.runId ?? (data.idempotencyKey ? runIdForIdempotencyKey(tenant, data.idempotencyKey) : newRunId());
    const now = Date.now();
    const deadlineMs = data.options?.deadlineMs ?? this.config.defaultDeadlineMs;
    const { meta, created } = await this.store.create({
      id: runId,
      tenant,
      graph: data.graph,
      ...(data.graphVersion === undefined ? {} : { graphVersion: data.graphVersion }),
      input: data.input,
      maxSteps: data.options?.maxSteps ?? this.config.defaultMaxSteps,
      ...(deadlineMs > 0 ? { deadlineAt: now + deadlineMs } : {}),
      ...(data.options?.tokenBudget ? { tokenBudget: data.options.tokenBudget } : {}),
      ...(data.idempotencyKey === undefined ? {} : { idempotencyKey: data.idempotencyKey }),
      ...(data.webhookUrl === undefined ? {} : { webhookUrl: data.webhookUrl }),
      ...(extras.batchId === undefined ? {} : { batchId: extras.batchId }),
      ...(data.conversationId === undefined ? {} : { conversationId: data.conversationId }),
      now,
    });
    if (meta.tenant !== tenant) throw new AgentqError('CONFLICT', `run id ${runId} is taken; choose another runId`);
    // The job id is the run id: a retried enqueue adds nothing while the first job exists, and the
    // intake ignores a run it already took in.
    if (meta.status === 'queued' && meta.tasks === null) {
      // A failed inline intake falls back to the queue; the intake ignores a run already taken in.
      if (this.admitInline && (await this.admitInline(meta).catch(() => false))) return { record: toRunRecord(meta), created, meta };
      const job: StoredRunJob = { v: 1, stored: true, runId };
      await this.intakeQueue.add(data.graph, job, { ...INTAKE_JOB_OPTIONS, jobId: runId });
    }
    return { record: toRunRecord(meta), created, meta };
  }
}
