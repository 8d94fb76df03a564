import type { Job } from 'bullmq';
import type { AgentqError } from '../../shared/contracts/errors.js';
import type { OversizedJob } from '../../shared/bullmq/oversized-job-data.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';

interface RefusedRawJob {
  store: RedisRunStore;
  runId: string;
  tenant: string;
  graph: string;
  /** The run's step limit as any run's (AGENTQ_DEFAULT_MAX_STEPS): the record is a run's like any other. */
  maxSteps: number;
  error: ReturnType<AgentqError['toRecord']>;
  now: number;
}

/** Creates `runId` failed with `error` (no input kept): what a raw job refused before it became a run leaves. */
export async function failRefusedRawJob({
  store,
  runId,
  tenant,
  graph,
  maxSteps,
  error,
  now,
}: RefusedRawJob): Promise<void> {
  const { meta } = await store.creation.create({
    id: runId,
    tenant,
    graph: graph.slice(0, 128),
    input: null,
    maxSteps,
    now,
  });
  // Never another tenant's run that happens to have this id.
  if (meta.tenant === tenant) await store.lifecycle.finish(meta.id, 'failed', error, now, { onlyFrom: 'queued' });
}

/** Why a raw job over AGENTQ_MAX_JOB_BYTES was refused unread, and what to do instead. */
export function oversizedMessage(job: Job, oversized: OversizedJob): string {
  return `raw job ${job.id ?? ''} on queue ${job.queueName} is ${oversized.bytes} bytes, over the limit of ${oversized.limitBytes} bytes (AGENTQ_MAX_JOB_BYTES): it was not read and its input was not stored. Send large content as documents (POST /v1/documents) and refer to them in the input, or raise AGENTQ_MAX_JOB_BYTES`;
}
