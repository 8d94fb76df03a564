import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { AgentqError } from '../../contracts/errors.js';
import { errorBodyOf } from './create-openai-client.js';

/** How much of an error response's body a message (and its details) keeps. */
const BODY_CHARS = 500;

interface OpenAIErrorContext {
  /** Where the request went, for messages. */
  baseURL: string;
  model: string;
  timeoutMs: number;
  /** The step's signal: an abort it caused is the step's, not the provider's. */
  abortSignal: AbortSignal | undefined;
  /** A Retry-After longer than this is cut to it. */
  maxRetryAfterMs: number;
}

/**
 * Maps an openai SDK error onto agentq's error rules (docs/reference/errors.md): 429 with Retry-After parks the step
 * (RATE_LIMITED with `retryAfterMs`); 429 without it, 5xx, 408, 409, timeouts and connection errors retry with backoff;
 * every other 4xx fails the run with the provider's message (and its error code in `details`).
 */
export function mapOpenAIError(error: unknown, context: OpenAIErrorContext): unknown {
  if (
    error instanceof APIUserAbortError ||
    (context.abortSignal?.aborted && !(error instanceof APIError && error.status !== undefined))
  ) {
    // The step was cancelled, timed out or is shutting down: its own reason says which.
    const reason: unknown = context.abortSignal?.reason;
    return reason instanceof Error
      ? reason
      : new AgentqError('CANCELLED', 'the model request was aborted', { cause: error });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new AgentqError(
      'TIMEOUT',
      `the model request to ${context.baseURL} (model '${context.model}') got no answer within ${context.timeoutMs} ms (AGENTQ_LLM_TIMEOUT_MS)`,
      {
        retryable: true,
        cause: error,
      },
    );
  }
  if (error instanceof APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return new AgentqError(
      'PROVIDER_ERROR',
      `could not reach the model server at ${context.baseURL}${cause} (check OPENAI_BASE_URL)`,
      { retryable: true, cause: error },
    );
  }
  if (!(error instanceof APIError) || error.status === undefined) return error;

  const status = error.status;
  const details = {
    status,
    ...(error.code ? { code: error.code } : {}),
    ...(error.type ? { type: error.type } : {}),
    ...(error.param ? { param: error.param } : {}),
    ...(error.requestID ? { requestId: error.requestID } : {}),
    ...(error.error === undefined && errorBodyOf(error.headers) ? { body: clip(errorBodyOf(error.headers)!) } : {}),
  };
  const providerMessage = providerMessageOf(error);
  if (status === 429) {
    // OpenAI answers 429 insufficient_quota when billing is exhausted: waiting does not help.
    if (error.code === 'insufficient_quota') {
      return new AgentqError(
        'PROVIDER_ERROR',
        `the model provider refused the request: ${providerMessage} (quota exhausted; check the account's billing)`,
        { details, cause: error },
      );
    }
    const retryAfterMs = retryAfterOf(error.headers, context.maxRetryAfterMs);
    return new AgentqError(
      'RATE_LIMITED',
      `the model provider is rate limiting requests (HTTP 429): ${providerMessage}`,
      {
        retryable: true,
        details,
        cause: error,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      },
    );
  }
  if (status >= 500 || status === 408 || status === 409) {
    return new AgentqError('PROVIDER_ERROR', `the model provider failed (HTTP ${status}): ${providerMessage}`, {
      retryable: true,
      details,
      cause: error,
    });
  }
  const hint =
    status === 401 || status === 403
      ? ' (check OPENAI_API_KEY)'
      : status === 404
        ? ` (check LLM_MODEL '${context.model}' and OPENAI_BASE_URL ${context.baseURL})`
        : error.code === 'context_length_exceeded'
          ? ' (the conversation is longer than the model accepts)'
          : '';
  return new AgentqError(
    'PROVIDER_ERROR',
    `the model provider rejected the request (HTTP ${status}): ${providerMessage}${hint}`,
    { details, cause: error },
  );
}

function providerMessageOf(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string' && body.message !== '') return body.message;
  // A body the SDK did not keep (JSON without an `error` member): its text says what the server refused.
  const kept = body === undefined ? errorBodyOf(error.headers)?.trim() : undefined;
  return kept ? clip(kept) : error.message;
}

function clip(text: string): string {
  return text.length > BODY_CHARS ? `${text.slice(0, BODY_CHARS)}… (${text.length} characters)` : text;
}

/** `retry-after-ms` (OpenAI's own), else `retry-after` in seconds or as an HTTP date; capped. */
export function retryAfterOf(headers: Headers | undefined, maxMs: number): number | undefined {
  if (!headers) return undefined;
  let ms: number | undefined;
  const milliseconds = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) ms = milliseconds;
  const value = headers.get('retry-after');
  if (ms === undefined && value) {
    const seconds = Number.parseFloat(value);
    if (Number.isFinite(seconds) && seconds >= 0) ms = seconds * 1000;
    else {
      const date = Date.parse(value);
      if (Number.isFinite(date)) ms = Math.max(0, date - Date.now());
    }
  }
  return ms === undefined ? undefined : Math.min(Math.ceil(ms), maxMs);
}
