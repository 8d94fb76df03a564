import { AgentqError } from '../../shared/contracts/errors.js';
import type { RedisRunStore, StepMeta } from '../../shared/store/redis-run-store.js';
import type { StepOutcome } from './step-processor-options.js';

/**
 * The commit script refused a step that ended past its run's deadline (a paused worker
 * committed 5.7 s late): the run fails with DEADLINE, its last commit kept. The job is finished already.
 */
export async function failPastDeadline(
  store: RedisRunStore,
  meta: StepMeta,
  superstep: number,
  node: string,
  attempt: number,
): Promise<StepOutcome> {
  const error = new AgentqError(
    'DEADLINE',
    `the run passed its deadline (${new Date(meta.deadlineAt ?? 0).toISOString()}) before node '${node}' could commit; its work was not kept`,
  );
  await store.lifecycle.finish(meta.id, 'failed', { ...error.toRecord(), node, attempt }, Date.now(), { superstep });
  return 'failed';
}
