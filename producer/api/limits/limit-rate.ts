import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RedisConnection } from '../../../shared/redis/connect-redis.js';
import { ApiError, sendApiError } from '../errors.js';
import { requireRedis } from '../redis-ready.js';
import type { RateLimiter } from '../../../shared/operations/limits/rate-limiter.js';

/**
 * onRequest hook (after authentication): 503 at once when Redis is down, 429 with Retry-After once the
 * caller's key has spent its requests of this minute. RateLimit-* headers tell the budget left.
 */
export function limitRate(
  rateLimiter: RateLimiter,
  redis: RedisConnection,
  /** Whose budget a request spends. @default its API key (`anonymous` without) */
  keyOf: (request: FastifyRequest) => string = (request) => request.principal?.keyId ?? 'anonymous',
) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    try {
      await requireRedis(redis);
      const keyId = keyOf(request);
      const decision = await rateLimiter.consume(keyId);
      if (decision.limit > 0) {
        reply.header('ratelimit-limit', String(decision.limit));
        reply.header('ratelimit-remaining', String(decision.remaining));
        reply.header('ratelimit-reset', String(decision.resetSeconds));
      }
      if (!decision.allowed) {
        return sendApiError(
          reply,
          new ApiError(
            429,
            'RATE_LIMITED',
            `API key ${keyId} made more than ${decision.limit} requests this minute (AGENTQ_RATE_LIMIT_PER_MINUTE); retry after ${decision.resetSeconds} s`,
            {
              headers: { 'retry-after': String(decision.resetSeconds) },
            },
          ),
        );
      }
      return undefined;
    } catch (error) {
      return sendApiError(reply, error);
    }
  };
}
