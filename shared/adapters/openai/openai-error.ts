import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { AgentqError } from '../../contracts/errors.js';
import { redactCredentials } from '../../contracts/redact-credentials.js';
import { errorBodyOf } from './create-openai-client.js';

/** How much of an error response's body a message (and its details) keeps. */
const BODY_CHARS = 500;

interface OpenAIErrorContext {
  /** Where the request went: for the operator's logs (the error's cause), never in its message. */
  baseURL: string;
  model: string;
  timeoutMs: number;
  /** The step's signal: an abort it caused is the step's, not the provider's. */
  abortSignal: AbortSignal | undefined;
  /** A Retry-After longer than this is cut to it. */
  maxRetryAfterMs: number;
  /** The request asked for the flex tier: its capacity refusal is FLEX_UNAVAILABLE, and its timeout the flex one. @default false */
  flex?: boolean;
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
  const cause = addressedCause(error, context.baseURL);
  if (error instanceof APIConnectionTimeoutError) {
    return new AgentqError(
      'TIMEOUT',
      `the model request (model '${context.model}') got no answer from the model server within ${context.timeoutMs} ms (${context.flex ? 'AGENTQ_FLEX_TIMEOUT_MS' : 'AGENTQ_LLM_TIMEOUT_MS'})`,
      { retryable: true, cause },
    );
  }
  if (error instanceof APIConnectionError) {
    // The system error's code only: its message names the address connected to (ECONNREFUSED 10.0.0.5:8000).
    const code = systemCodeOf(error);
    return new AgentqError(
      'PROVIDER_ERROR',
      `could not reach the model server${typeof code === 'string' ? ` (${code})` : ''}; the operator's logs name its address (check OPENAI_BASE_URL)`,
      { retryable: true, cause },
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
    ...(error.error === undefined && errorBodyOf(error.headers)
      ? { body: withoutAddress(clip(errorBodyOf(error.headers)!), context.baseURL) }
      : {}),
  };
  const providerMessage = withoutAddress(providerMessageOf(error), context.baseURL);
  if (status === 429) {
    // OpenAI answers 429 insufficient_quota when billing is exhausted: waiting does not help.
    if (error.code === 'insufficient_quota') {
      return new AgentqError(
        'PROVIDER_ERROR',
        `the model provider refused the request: ${providerMessage} (quota exhausted; check the account's billing)`,
        { details, cause },
      );
    }
    // The flex tier out of capacity is not the account's rate limit: the step retries with backoff (no
    // park, since no window frees it), and a batch's plan may send the call live instead.
    if (context.flex && isFlexCapacityRefusal(error)) {
      return new AgentqError(
        'FLEX_UNAVAILABLE',
        `the model provider has no flex-tier capacity for the request right now (HTTP 429): ${providerMessage}`,
        { retryable: true, details, cause },
      );
    }
    const retryAfterMs = retryAfterOf(error.headers, context.maxRetryAfterMs);
    return new AgentqError(
      'RATE_LIMITED',
      `the model provider is rate limiting requests (HTTP 429): ${providerMessage}`,
      {
        retryable: true,
        details,
        cause,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      },
    );
  }
  if (status >= 500 || status === 408 || status === 409) {
    return new AgentqError('PROVIDER_ERROR', `the model provider failed (HTTP ${status}): ${providerMessage}`, {
      retryable: true,
      details,
      cause,
    });
  }
  const hint =
    status === 401 || status === 403
      ? ' (check OPENAI_API_KEY)'
      : status === 404
        ? ` (check LLM_MODEL '${context.model}' and OPENAI_BASE_URL)`
        : error.code === 'context_length_exceeded'
          ? ' (the conversation is longer than the model accepts)'
          : '';
  return new AgentqError(
    'PROVIDER_ERROR',
    `the model provider rejected the request (HTTP ${status}): ${providerMessage}${hint}`,
    { details, cause },
  );
}

/**
 * OpenAI's 429 to a flex request it lacks the resources for: code `resource_unavailable`, or a message
 * saying "resource unavailable" from a server that sends no code. An ordinary rate limit
 * (`rate_limit_exceeded`) of a flex request stays RATE_LIMITED.
 */
function isFlexCapacityRefusal(error: APIError): boolean {
  if (error.code === 'resource_unavailable') return true;
  return !error.code && /resource[ _]unavailable/i.test(providerMessageOf(error));
}

/**
 * The SDK's error wrapped in one that names the model server's address: run errors reach tenants, who
 * should not learn an internal endpoint's host, port or path, while the worker's log of a failed step
 * prints the cause for the operator.
 */
export function addressedCause(error: unknown, baseURL: string): Error {
  const text = error instanceof Error ? error.message : String(error);
  return new Error(redactCredentials(`the model server is ${baseURL}: ${text}`), { cause: error });
}

/** `text` with the model server's address (its URL, or its host:port) put as "the model server". */
export function withoutAddress(text: string, baseURL: string): string {
  let host: string | undefined;
  try {
    host = new URL(baseURL).host;
  } catch {
    host = undefined;
  }
  const addresses = [baseURL.replace(/\/+$/, ''), ...(host ? [host] : [])];
  return addresses.reduce((out, address) => out.split(address).join('the model server'), text);
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

/** The system error code (ECONNREFUSED, ENOTFOUND, …) somewhere in an error's causes. */
function systemCodeOf(error: Error): string | undefined {
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth += 1, cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}
