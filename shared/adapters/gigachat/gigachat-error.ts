import { AgentqError } from '../../contracts/errors.js';
import { addressedCause, retryAfterOf, withoutAddress } from '../openai/openai-error.js';

/** How much of an error response's body a message keeps. */
const BODY_CHARS = 500;

/** What a failed GigaChat request was, for its error's words. */
export interface GigaChatErrorContext {
  /** `chat` (the API) or `oauth` (the token endpoint): which settings the hint names. */
  endpoint: 'chat' | 'oauth';
  /** Where the request went: in the cause for the operator's logs, never in the message. */
  url: string;
  model: string;
  timeoutMs: number;
  maxRetryAfterMs: number;
}

/**
 * An HTTP error answer of GigaChat as agentq's error (docs/reference/errors.md): 429 is RATE_LIMITED (its
 * Retry-After obeyed), 5xx, 408 and 409 retry with backoff, any other 4xx fails the run with GigaChat's
 * message (`{status, message}`) and a hint at the setting to check.
 */
export function gigachatHttpError(
  status: number,
  bodyText: string,
  headers: Headers,
  context: GigaChatErrorContext,
): AgentqError {
  const message = withoutAddress(providerMessageOf(bodyText, status), context.url);
  const requestId = headers.get('x-request-id');
  const details = { status, ...(requestId ? { requestId } : {}) };
  const cause = addressedCause(new Error(`HTTP ${status}: ${clip(bodyText)}`), context.url);
  const who = context.endpoint === 'oauth' ? "GigaChat's OAuth endpoint" : 'GigaChat';
  if (status === 429) {
    const retryAfterMs = retryAfterOf(headers, context.maxRetryAfterMs);
    return new AgentqError('RATE_LIMITED', `${who} is rate limiting requests (HTTP 429): ${message}`, {
      retryable: true,
      details,
      cause,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status >= 500 || status === 408 || status === 409)
    return new AgentqError('PROVIDER_ERROR', `${who} failed (HTTP ${status}): ${message}`, {
      retryable: true,
      details,
      cause,
    });
  const hint =
    status === 401 || status === 403
      ? context.endpoint === 'oauth'
        ? ' (check GIGACHAT_AUTH_KEY and GIGACHAT_SCOPE)'
        : ' (a fresh access token was refused too; check GIGACHAT_SCOPE)'
      : status === 404
        ? ` (check LLM_MODEL '${context.model}' and GIGACHAT_BASE_URL)`
        : '';
  return new AgentqError('PROVIDER_ERROR', `${who} rejected the request (HTTP ${status}): ${message}${hint}`, {
    details,
    cause,
  });
}

/**
 * A request that got no HTTP answer: the step's own abort (cancellation, deadline, shutdown) keeps its
 * reason; the adapter's timeout is a retryable TIMEOUT; anything else (refused connection, TLS, DNS) a
 * retryable PROVIDER_ERROR naming the system's code, the address only in the cause.
 */
export function gigachatFetchError(
  error: unknown,
  { stepSignal, timedOut, context }: { stepSignal?: AbortSignal; timedOut: boolean; context: GigaChatErrorContext },
): unknown {
  if (error instanceof AgentqError) return error;
  if (stepSignal?.aborted) {
    const reason: unknown = stepSignal.reason;
    return reason instanceof Error
      ? reason
      : new AgentqError('CANCELLED', 'the model request was aborted', { cause: error });
  }
  const cause = addressedCause(error, context.url);
  if (timedOut)
    return new AgentqError(
      'TIMEOUT',
      `the GigaChat request (model '${context.model}') got no answer within ${context.timeoutMs} ms (AGENTQ_LLM_TIMEOUT_MS)`,
      { retryable: true, cause },
    );
  const code = systemCodeOf(error);
  const tls = typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code);
  return new AgentqError(
    'PROVIDER_ERROR',
    `could not reach ${context.endpoint === 'oauth' ? "GigaChat's OAuth endpoint" : 'GigaChat'}${code ? ` (${code})` : ''}; ${
      tls
        ? 'its certificate is not trusted: set GIGACHAT_CA_FILE to the Russian Trusted Root CA'
        : `the operator's logs name its address (check ${context.endpoint === 'oauth' ? 'GIGACHAT_AUTH_URL' : 'GIGACHAT_BASE_URL'})`
    }`,
    { retryable: !tls, cause },
  );
}

/** GigaChat's error bodies are `{status, message}`; other bodies are quoted, clipped. */
function providerMessageOf(bodyText: string, status: number): string {
  try {
    const body = JSON.parse(bodyText) as { message?: unknown; error?: { message?: unknown } };
    if (typeof body.message === 'string' && body.message !== '') return body.message;
    if (typeof body.error?.message === 'string' && body.error.message !== '') return body.error.message;
  } catch {
    // not JSON: the text itself
  }
  return bodyText.trim() === '' ? `no body (HTTP ${status})` : clip(bodyText.trim());
}

function clip(text: string): string {
  return text.length > BODY_CHARS ? `${text.slice(0, BODY_CHARS)}… (${text.length} characters)` : text;
}

/** The system error code (ECONNREFUSED, UNABLE_TO_VERIFY_LEAF_SIGNATURE, …) somewhere in an error's causes. */
function systemCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1, current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
  }
  return undefined;
}
