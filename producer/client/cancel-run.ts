import { stepJobId } from '../../shared/contracts/job-schema.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { StepQueues } from '../../shared/store/step-queues.js';

interface CancelDeps {
  store: RedisRunStore;
  stepQueues: StepQueues;
  /** The run's record; NOT_FOUND when there is none. */
  require(runId: string): Promise<RunRecord>;
}

/**
 * Cancels a run. One with no step in flight is cancelled at once; a running one is cancelled at its step
 * boundary (the running node's AbortSignal fires). → the record after the request, and whether this
 * request changed the run (false: it had finished, or was cancelling already).
 */
export async function cancelRun(deps: CancelDeps, runId: string): Promise<{ record: RunRecord; changed: boolean }> {
  await deps.require(runId);
  const { status, changed } = await deps.store.lifecycle.cancelRequest(runId, Date.now());
  if (status === 'cancelling') await cancelIdleSteps(deps, runId);
  return { record: await deps.require(runId), changed };
}

/** A running run whose next step waits in the queue (or in a retry delay) has no node to abort: end it here. */
async function cancelIdleSteps({ store, stepQueues }: CancelDeps, runId: string): Promise<void> {
  const meta = await store.reads.get(runId);
  if (!meta?.tasks || meta.status !== 'cancelling') return;
  for (let task = 0; task < meta.tasks.length; task += 1) {
    const job = await stepQueues.forRun(runId).getJob(stepJobId(runId, meta.superstep, task));
    if (!job) continue;
    const state = await job.getState();
    if (state === 'active') return; // the worker running it ends the run
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized') {
      // remove() refuses a job a worker has just locked; that worker then ends the run.
      if (
        !(await job.remove().then(
          () => true,
          () => false,
        ))
      )
        return;
    }
  }
  await store.lifecycle.finish(
    runId,
    'cancelled',
    { code: 'CANCELLED', message: 'the run was cancelled on request', retryable: false },
    Date.now(),
    {
      onlyFrom: 'cancelling',
      superstep: meta.superstep,
    },
  );
}
