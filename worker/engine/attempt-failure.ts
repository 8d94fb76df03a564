import { StepAbort } from '../../shared/contracts/abort.js';
import { AgentqError, toAgentqError } from '../../shared/contracts/errors.js';
import type { CompiledNode } from '../../shared/graph/graph.js';

/**
 * A failed attempt's error as a run records it: a node's timeout is retryable (the next attempt may be
 * quicker), the run's deadline is not; anything else as `toAgentqError` makes it.
 */
export function attemptError(thrown: unknown): AgentqError {
  const abort = thrown instanceof StepAbort ? thrown : undefined;
  if (abort?.kind === 'timeout') return new AgentqError('TIMEOUT', abort.message, { retryable: true });
  if (abort?.kind === 'deadline') return new AgentqError('DEADLINE', abort.message);
  return toAgentqError(thrown);
}

/**
 * Whether the node gets another attempt after `error` failed attempt `attempt` (1-based): its retry
 * policy accepts the error and attempts are left, under `cap` too (a start job's attempts, set before
 * its node was known).
 */
export function retriesAfter(
  node: CompiledNode,
  error: AgentqError,
  attempt: number,
  cap: number = node.retry.maxAttempts,
): boolean {
  return node.retry.retryOn(error) && attempt < Math.min(node.retry.maxAttempts, cap);
}
