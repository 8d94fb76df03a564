import { sleep } from '../../contracts/abort.js';
import { AgentqError } from '../../contracts/errors.js';
import { qdrantModule } from './qdrant-module.js';

export interface QdrantRetryOptions {
  /** Tries per request when Qdrant answers 5xx, times out or cannot be reached. @default 4 */
  maxAttempts?: number;
  /** Wait before the second try, doubled for each later one (plus up to 25 % jitter). @default 200 */
  retryDelayMs?: number;
  /** A retry that would wait longer than this (a long Retry-After of a 429) fails the call instead, still retryable. @default 5000 */
  maxWaitMs?: number;
}

/** What the openapi fetcher throws for a non-2xx answer (duck-typed: the class lives in a transitive package). */
interface HttpErrorLike {
  status: number;
  data?: unknown;
}

function isHttpError(error: unknown): error is HttpErrorLike {
  return typeof error === 'object' && error !== null && typeof (error as { status?: unknown }).status === 'number';
}

/** Qdrant's own message from an error body `{"status": {"error": "..."}}`, else the raw body. */
function qdrantMessage(data: unknown): string {
  const message = (data as { status?: { error?: unknown } } | undefined)?.status?.error;
  if (typeof message === 'string') return message;
  return typeof data === 'string' ? data.slice(0, 300) : JSON.stringify(data ?? null).slice(0, 300);
}

/** The HTTP status of a Qdrant answer that was an error, or undefined for errors without one. */
export function qdrantStatus(error: unknown): number | undefined {
  if (AgentqError.isInstance(error)) return (error.details as { status?: number } | undefined)?.status;
  return isHttpError(error) ? error.status : undefined;
}

/**
 * A Qdrant client failure as an AgentqError that says what was being done: 5xx, timeouts and
 * connection failures are retryable (UNAVAILABLE / TIMEOUT), 429 is RATE_LIMITED with its delay, and
 * other 4xx are not retryable — Qdrant refused the request, so a retry would be refused too.
 */
function toQdrantError(operation: string, error: unknown): AgentqError {
  if (AgentqError.isInstance(error)) return error;
  const { QdrantClientResourceExhaustedError, QdrantClientTimeoutError } = qdrantModule();
  if (error instanceof QdrantClientResourceExhaustedError) {
    return new AgentqError(
      'RATE_LIMITED',
      `Qdrant is rate limiting (${operation}); retry after ${error.retry_after} s`,
      {
        retryable: true,
        retryAfterMs: error.retry_after * 1000,
        details: { status: 429 },
        cause: error,
      },
    );
  }
  if (error instanceof QdrantClientTimeoutError) {
    return new AgentqError(
      'TIMEOUT',
      `Qdrant did not answer in time (${operation}); raise AGENTQ_QDRANT_TIMEOUT_MS if the server is just slow`,
      { retryable: true, cause: error },
    );
  }
  if (isHttpError(error)) {
    const status = error.status;
    const message = qdrantMessage(error.data);
    if (status >= 500 || status === 408) {
      return new AgentqError('UNAVAILABLE', `Qdrant failed (${operation}): HTTP ${status} ${message}`, {
        retryable: true,
        details: { status },
        cause: error,
      });
    }
    if (status === 401 || status === 403) {
      return new AgentqError(
        'UNAVAILABLE',
        `Qdrant refused our credentials (${operation}): HTTP ${status}; set QDRANT_API_KEY to a key with read-write access`,
        { details: { status }, cause: error },
      );
    }
    return new AgentqError('INTERNAL', `Qdrant refused the request (${operation}): HTTP ${status} ${message}`, {
      details: { status },
      cause: error,
    });
  }
  const reason =
    error instanceof Error
      ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}`
      : String(error);
  return new AgentqError(
    'UNAVAILABLE',
    `cannot reach Qdrant (${operation}): ${reason}; check QDRANT_URL and that the server is up`,
    { retryable: true, cause: error },
  );
}

/**
 * Runs one Qdrant request, retrying what may succeed on another try (see {@link toQdrantError}) with
 * exponential backoff. Every request agentq sends is idempotent (upserts by id, deletes by filter,
 * creations checked afterwards), so a retry after a lost answer does no harm.
 */
export async function callQdrant<T>(
  operation: string,
  request: () => Promise<T>,
  { maxAttempts = 4, retryDelayMs = 200, maxWaitMs = 5000 }: QdrantRetryOptions = {},
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await request();
    } catch (caught) {
      const error = toQdrantError(operation, caught);
      const waitMs =
        error.code === 'RATE_LIMITED'
          ? (error.retryAfterMs ?? retryDelayMs)
          : retryDelayMs * 2 ** (attempt - 1) * (1 + Math.random() / 4);
      if (!error.retryable || attempt >= maxAttempts || waitMs > maxWaitMs) throw error;
      await sleep(waitMs);
    }
  }
}
