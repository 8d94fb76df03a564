import type { ErrorRecord } from '../../shared/contracts/errors.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { ApiError, type ApiErrorCode } from './errors.js';

/**
 * The HTTP status of a run that ended without an answer, by its error code: what a client that waited
 * for the run (`POST /v1/agent/chat`) is told. 4xx where the outcome is the request's or its content's
 * (asking again unchanged gets the same answer), 502/504 where the model provider failed, 500 only for
 * what nobody expected (INTERNAL, and any code not listed). Keyed by string: some model-outcome codes are
 * named before every branch knows them, and a run record read from Redis may hold a code this build lacks.
 */
export const RUN_OUTCOME_STATUS: Readonly<Record<string, number>> = {
  // The input itself, found wrong by the worker (e.g. a tool name this worker lacks).
  INVALID_INPUT: 400,
  UNKNOWN_GRAPH: 400,
  // A guardrail refused the question or the answer: the content's outcome.
  GUARDRAIL_BLOCKED: 422,
  // A guardrail's check ran past AGENTQ_GUARDRAIL_TIMEOUT_MS on the text: the same text would again.
  GUARDRAIL_TIMEOUT: 422,
  // The run's own token budget (options.tokenBudget) could not cover the work asked.
  BUDGET_EXCEEDED: 422,
  // The tenant's token or cost budget for the day or month is spent: a quota, as at admission.
  TENANT_BUDGET_EXCEEDED: 429,
  // The run took its maxSteps without ending: the graph's routing (or the limit) decides, not chance.
  MAX_STEPS: 422,
  // Another turn of the same conversation holds it and this turn asked to be refused (onBusy 'reject').
  CONVERSATION_BUSY: 409,
  // A single model request is larger than the whole provider window of AGENTQ_RATE_LIMITS.
  RATE_LIMITED: 429,
  // A tool the run depended on failed and the run's tool handling fails the run on that.
  TOOL_ERROR: 424,
  // The model refused, or the provider's filter withheld the answer: the content's outcome.
  MODEL_REFUSED: 422,
  CONTENT_FILTERED: 422,
  // The model provider failed or answered with nothing usable.
  PROVIDER_ERROR: 502,
  OUTPUT_TRUNCATED: 502,
  EMPTY_RESPONSE: 502,
  UNSUPPORTED_TOOL_CALL: 502,
  PROVIDER_BATCH_RESULTS_UNAVAILABLE: 502,
  // The provider did not answer in time, after the step's retries.
  TIMEOUT: 504,
  // The run passed its deadlineMs before it could answer.
  DEADLINE: 504,
};

/** The budget a budget error names: the run's own, or the tenant's limit (tokensPerDay, costPerMonth, …). */
function budgetOf(failure: ErrorRecord, details: Record<string, unknown>): string | undefined {
  if (failure.code === 'BUDGET_EXCEEDED') return 'tokenBudget';
  if (failure.code === 'TENANT_BUDGET_EXCEEDED' && typeof details.limit === 'string') return details.limit;
  return undefined;
}

/**
 * The details of a failed run's answer: the run, the node that failed, the stage (a guardrail's `input` or
 * `output`, else that node), the reason (a guardrail's own, else the error's message), the guardrail or
 * budget when there is one, and whatever else the run's error recorded.
 */
function runFailureDetails(runId: string, failure: ErrorRecord): Record<string, unknown> {
  const recorded =
    typeof failure.details === 'object' && failure.details !== null && !Array.isArray(failure.details)
      ? (failure.details as Record<string, unknown>)
      : {};
  const budget = budgetOf(failure, recorded);
  return {
    ...recorded,
    runId,
    node: failure.node ?? null,
    stage: typeof recorded.stage === 'string' ? recorded.stage : (failure.node ?? null),
    reason: typeof recorded.reason === 'string' ? recorded.reason : failure.message,
    ...(budget === undefined ? {} : { budget }),
    retryable: failure.retryable,
  };
}

/** A finished run that did not complete, as the ApiError its waiting client gets. */
export function runOutcomeError(done: RunRecord, graph: string): ApiError {
  if (done.status === 'cancelled')
    return new ApiError(409, 'CANCELLED', `the ${graph} run ${done.id} was cancelled`, {
      details: { runId: done.id },
    });
  const failure = done.error;
  if (!failure)
    return new ApiError(500, 'INTERNAL', `the ${graph} run ${done.id} ${done.status} with no error recorded`, {
      details: { runId: done.id },
    });
  return new ApiError(
    RUN_OUTCOME_STATUS[failure.code] ?? 500,
    failure.code as ApiErrorCode,
    `the ${graph} run ${done.id} ${done.status}: ${failure.message}`,
    { details: runFailureDetails(done.id, failure) },
  );
}
