import { redactCredentials } from './redact-credentials.js';

/**
 * One error type for the whole product. `code` is stable (never renamed); `retryable` tells the step
 * processor whether another attempt can help. Only the step processor translates these into BullMQ's
 * signals (UnrecoverableError, DelayedError).
 */
export const ERROR_CODES = [
  'INVALID_INPUT',
  'UNKNOWN_GRAPH',
  'MAX_STEPS',
  'DEADLINE',
  'TIMEOUT',
  'CANCELLED',
  'BUDGET_EXCEEDED',
  'PROVIDER_ERROR',
  'RATE_LIMITED',
  'TOOL_ERROR',
  'NOT_FOUND',
  'CONFLICT',
  'INVALID_GRAPH',
  // Tasks wait on nodes whose ready(state) is false and nothing else is left to run: details {nodes}.
  'NODE_NOT_READY',
  'UNAVAILABLE',
  'INTERNAL',
  // A document whose type is not supported (empty, binary, an unknown ZIP): it fails alone, not retried.
  'UNSUPPORTED_FORMAT',
  // A document of a supported type that its parser could not read (corrupt, encrypted, no text).
  'PARSE_ERROR',
  // A guardrail refused a run's input or a model's answer (details name the guardrail, stage and reason).
  'GUARDRAIL_BLOCKED',
  // A guardrail check took longer than AGENTQ_GUARDRAIL_TIMEOUT_MS on one text (details name the guardrail and stage).
  'GUARDRAIL_TIMEOUT',
  // A tenant's token or cost budget (per day or month) cannot cover the next model call: the run fails before it.
  'TENANT_BUDGET_EXCEEDED',
  // A tenant's storage budget (every byte of its runs and documents kept in Redis) cannot hold what
  // is asked: retryable (429) when it fits once stored runs expire or are purged, not (413) when it never fits.
  'STORAGE_BUDGET_EXCEEDED',
  // Redis refused a write because it is full (maxmemory, noeviction): nothing changed; retry shortly.
  'REDIS_FULL',
  // Redis did not answer (down, unreachable, read-only replica, loading): retry shortly.
  'REDIS_UNAVAILABLE',
  // The disk under the embedded store (its SQLite file) is full: the message names the path; nothing was
  // written, and ingest waits for space without spending attempts.
  'STORAGE_FULL',
  // A batch asked for the provider's Batch API, and the provider has none (404 on /v1/batches): refused at submission.
  'PROVIDER_BATCH_UNSUPPORTED',
  // The provider refused a flex-tier request for lack of capacity (OpenAI's 429 `resource_unavailable` to a
  // `service_tier: "flex"` request): retryable; a batch's plan may send the call live instead.
  'FLEX_UNAVAILABLE',
  // A provider batch ended but its results could not be downloaded (or the batch read) within
  // AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS: its runs fail, not retried (the provider may have answered and charged).
  'PROVIDER_BATCH_RESULTS_UNAVAILABLE',
  // A replay asked another question than its original at some step: details {step, node, diff}.
  'REPLAY_DIVERGED',
  // A fork or replay needs a run's recording, and it is not there: never made (AGENTQ_RECORDING), expired
  // with the run, or stopped at its byte budget; the message names what is missing.
  'RECORDING_UNAVAILABLE',
  // A conversation's new turn with onBusy 'reject' while its previous turn is still queued or running.
  'CONVERSATION_BUSY',
  // The model answered, but not with something a run can use; each fails the step unless the run accepts it
  // (an agent's `accept` option). The model refused (its refusal text in the message): not retried.
  'MODEL_REFUSED',
  // finish_reason content_filter and no usable output: the provider's filter stopped the answer; not retried.
  'CONTENT_FILTERED',
  // finish_reason length and no usable output: maxTokens (AGENTQ_LLM_MAX_TOKENS) too small; not retried.
  'OUTPUT_TRUNCATED',
  // No text, no tool call, no refusal: retried (the empty answer is not saved, so a retry asks again).
  'EMPTY_RESPONSE',
  // A tool call of a type agentq cannot run (e.g. `custom`); the message names the type and the tool.
  'UNSUPPORTED_TOOL_CALL',
  // The operator's tenant policy (AGENTQ_TENANT_POLICY_FILE) does not allow what the run asked for; the
  // details name the control, the input field and the policy entry to change. Not retried.
  'POLICY_DENIED',
  // A child run a node waited for (context.runGraph) failed or was cancelled: details {childRunId, graph,
  // status, error} carry the child's own error code and message. Not retried: the child's end is final.
  'CHILD_RUN_FAILED',
  // A callback URL (context.callback) whose signature does not fit: altered, or signed with another secret.
  'CALLBACK_INVALID',
  // A callback URL past its expiry (or whose wait timed out): nothing changed.
  'CALLBACK_EXPIRED',
  // A callback URL already called once: the wait has its result; nothing changed.
  'CALLBACK_USED',
  // A chat request transformer (an agent's `chatRequestTransformer`) threw or returned no request: the step
  // fails before anything is sent; not retried (details name the node and the call).
  'CHAT_REQUEST_TRANSFORM_FAILED',
  // A graph rollout names a version no live worker serves: new runs would only wait for one. Nothing changed.
  'ROLLOUT_VERSION_UNSERVED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorRecord {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  details?: unknown;
  /** The node that raised it, when it came from a step. */
  node?: string;
  /** The attempt (1-based) on which the run was failed. */
  attempt?: number;
}

const marker = Symbol.for('agentq.error');

interface AgentqErrorOptions {
  retryable?: boolean;
  details?: unknown;
  cause?: unknown;
  /**
   * Try again after this long without spending an attempt (a provider's 429 with Retry-After): the step
   * is parked as a delayed job.
   */
  retryAfterMs?: number;
}

export class AgentqError extends Error {
  readonly [marker] = true;
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details?: unknown;
  readonly retryAfterMs?: number;

  constructor(
    code: ErrorCode,
    message: string,
    { retryable = false, details, cause, retryAfterMs }: AgentqErrorOptions = {},
  ) {
    // Messages reach users, run records and logs: never with a URL's credentials in them.
    super(redactCredentials(message), cause === undefined ? undefined : { cause });
    this.name = 'AgentqError';
    this.code = code;
    this.retryable = retryable;
    this.details = details;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }

  static isInstance(value: unknown): value is AgentqError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }

  toRecord(): ErrorRecord {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

/** Any thrown value as an AgentqError; unknown errors are INTERNAL and retryable (a bug or a blip). */
export function toAgentqError(error: unknown): AgentqError {
  if (AgentqError.isInstance(error)) return error;
  if (error instanceof Error) {
    return new AgentqError('INTERNAL', error.message || error.name, { retryable: true, cause: error });
  }
  return new AgentqError('INTERNAL', String(error), { retryable: true });
}
