import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { asRedisFaultError, redisFaultOf } from '../../shared/redis/redis-fault.js';
import { z } from 'zod';
import { AgentqError, type ErrorCode } from '../../shared/contracts/errors.js';
import { redactCredentials } from '../../shared/contracts/redact-credentials.js';

/**
 * Codes of HTTP answers: the product's error codes (shared/contracts/errors.ts) plus the few that only HTTP has.
 * Stable like the others: never renamed.
 */
export type ApiErrorCode =
  ErrorCode | 'UNAUTHORIZED' | 'FORBIDDEN' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE' | 'METHOD_NOT_ALLOWED';

/** The one error shape of every HTTP answer (docs/reference/errors.md). */
export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.string().describe('stable error code, e.g. INVALID_INPUT, NOT_FOUND, RATE_LIMITED'),
      message: z.string().describe('what was wrong and what to do'),
      details: z.unknown().optional(),
    }),
  })
  .describe('Error');
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** An error with its HTTP status (and headers such as Retry-After), thrown or sent by the API. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly statusCode: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly options: { details?: unknown; headers?: Record<string, string> } = {},
  ) {
    // Every answer's message, whatever it quotes (a driver's error, a URL): never a URL's credentials.
    super(redactCredentials(message));
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.options.details === undefined ? {} : { details: this.options.details }),
      },
    };
  }
}

const STATUS_OF: Partial<Record<ErrorCode, number>> = {
  INVALID_INPUT: 400,
  UNKNOWN_GRAPH: 400,
  INVALID_GRAPH: 400,
  BUDGET_EXCEEDED: 400,
  TENANT_BUDGET_EXCEEDED: 429,
  STORAGE_BUDGET_EXCEEDED: 429,
  NOT_FOUND: 404,
  POLICY_DENIED: 403,
  CONFLICT: 409,
  CALLBACK_INVALID: 401,
  CALLBACK_EXPIRED: 410,
  CALLBACK_USED: 409,
  ROLLOUT_VERSION_UNSERVED: 409,
  PROVIDER_BATCH_UNSUPPORTED: 422,
  CONVERSATION_BUSY: 409,
  RATE_LIMITED: 429,
  RECORDING_UNAVAILABLE: 409,
  UNAVAILABLE: 503,
  REDIS_FULL: 503,
  REDIS_UNAVAILABLE: 503,
  TIMEOUT: 504,
};

const CODE_OF_STATUS: Record<number, ApiErrorCode> = {
  400: 'INVALID_INPUT',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/** ioredis and BullMQ errors that mean "Redis is not reachable now", as opposed to a bad command. */
const REDIS_DOWN =
  /Command timed out|Stream isn't writeable|Connection is closed|max retries per request|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|Redis is not reachable|Connection is in (closing|closed)/i;

export function isRedisUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    if (current.name === 'MaxRetriesPerRequestError' || REDIS_DOWN.test(current.message)) return true;
  }
  return false;
}

interface ValidationIssue {
  instancePath?: string;
  message?: string;
}

function describeValidation(error: FastifyError): ApiError {
  const part = error.validationContext ?? 'request';
  const issues = (error.validation ?? []) as ValidationIssue[];
  const lines = issues.map((issue) => {
    const path = (issue.instancePath ?? '').split('/').filter(Boolean);
    return `${[part, ...path].join('.')}: ${issue.message ?? 'is invalid'}`;
  });
  return new ApiError(400, 'INVALID_INPUT', lines.join('; ') || error.message, {
    details: issues.map((issue) => ({
      path: [part, ...(issue.instancePath ?? '').split('/').filter(Boolean)].join('.'),
      message: issue.message,
    })),
  });
}

/** Any thrown value as an ApiError with the right status and a message that says what to do. */
export function toApiError(error: unknown, request?: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (AgentqError.isInstance(error)) {
    // A storage budget that can never hold the request: 413, not a 429 that retrying would not cure.
    const tooLarge = error.code === 'STORAGE_BUDGET_EXCEEDED' && !error.retryable;
    const status = tooLarge ? 413 : (STATUS_OF[error.code] ?? (isRedisUnavailable(error) ? 503 : 500));
    // REDIS_FULL keeps its code; every other 503 is UNAVAILABLE, as the API has always said.
    const code = status === 503 && error.code !== 'REDIS_FULL' ? 'UNAVAILABLE' : error.code;
    return new ApiError(status, code, error.message, {
      ...(error.details === undefined ? {} : { details: error.details }),
      // A refusal that says when to come back (the admission's limits) says it in Retry-After.
      ...(status === 429 && error.retryAfterMs !== undefined
        ? { headers: { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))) } }
        : {}),
    });
  }
  if (redisFaultOf(error) === 'full') {
    const full = asRedisFaultError(error, 'accept this request') as Error;
    return new ApiError(503, 'REDIS_FULL', full.message, { headers: { 'retry-after': '1' } });
  }
  if (isRedisUnavailable(error)) {
    return new ApiError(503, 'UNAVAILABLE', `Redis is not reachable (${(error as Error).message}); try again shortly`, {
      headers: { 'retry-after': '1' },
    });
  }
  const fastifyError = error as Partial<FastifyError>;
  if (Array.isArray(fastifyError.validation)) return describeValidation(fastifyError as FastifyError);
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code = CODE_OF_STATUS[status] ?? 'INVALID_INPUT';
    return new ApiError(status, code, fastifyMessage(fastifyError, request));
  }
  return new ApiError(500, 'INTERNAL', `internal error (request ${request?.id ?? '?'}); the API's log has the details`);
}

/** Fastify's own 4xx messages, made specific where they are vague. */
function fastifyMessage(error: Partial<FastifyError>, request: FastifyRequest | undefined): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `request body is larger than the ${request?.routeOptions.bodyLimit ?? 'configured'} bytes this API accepts (AGENTQ_BODY_LIMIT_BYTES); send a smaller body`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `Content-Type '${request?.headers['content-type'] ?? ''}' is not supported here; send application/json`;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Content-Type is application/json but the body is empty; send a JSON body or no Content-Type';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'body is not valid JSON (the Content-Type says application/json); send JSON as described at /docs';
    default:
      return error.message ?? 'bad request';
  }
}

/** Sends `error` in the one error shape, with its headers. For hooks, which reply instead of throwing. */
export function sendApiError(reply: FastifyReply, error: unknown): FastifyReply {
  const apiError = toApiError(error, reply.request);
  if (apiError.code === 'INTERNAL') reply.log.error({ err: error, url: reply.request.url }, 'request failed');
  else if (apiError.code === 'UNAVAILABLE')
    reply.log.warn({ err: (error as Error).message, url: reply.request.url }, 'Redis unavailable');
  for (const [name, value] of Object.entries(apiError.options.headers ?? {})) reply.header(name, value);
  return reply.code(apiError.statusCode).type('application/json; charset=utf-8').send(apiError.toBody());
}

/** 404 in the error shape for a route that does not exist. */
export function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0] ?? request.url;
  return sendApiError(
    reply,
    new ApiError(404, 'NOT_FOUND', `no route ${request.method} ${path}; see /docs for the API's routes`),
  );
}
