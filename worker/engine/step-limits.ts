import { AgentqError } from '../../shared/contracts/errors.js';
import type { StepMeta } from '../../shared/store/redis-run-store.js';

/** The run limit a step may not start past (steps, token budget, deadline), as the error that fails the run; none: undefined. */
export function stepLimitError(
  meta: Pick<StepMeta, 'stepCount' | 'maxSteps' | 'tokenBudget' | 'usage' | 'deadlineAt'>,
  nodeName: string,
  now: number,
): AgentqError | undefined {
  if (meta.stepCount >= meta.maxSteps) {
    return new AgentqError(
      'MAX_STEPS',
      `the run reached its limit of ${meta.maxSteps} steps before node '${nodeName}'; raise options.maxSteps if the graph needs more`,
    );
  }
  if (meta.tokenBudget !== null && meta.usage.inputTokens + meta.usage.outputTokens >= meta.tokenBudget) {
    return new AgentqError(
      'BUDGET_EXCEEDED',
      `the run spent ${meta.usage.inputTokens + meta.usage.outputTokens} of its ${meta.tokenBudget}-token budget before node '${nodeName}'; raise options.tokenBudget to let it continue`,
    );
  }
  if (meta.deadlineAt !== null && now >= meta.deadlineAt) {
    return new AgentqError(
      'DEADLINE',
      `the run passed its deadline (${new Date(meta.deadlineAt).toISOString()}) before node '${nodeName}'`,
    );
  }
  return undefined;
}
