import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiContext } from '../api-context.js';
import { ApiError, errorBodySchema } from '../errors.js';
import { describeRedisTarget } from '../../../shared/redis/connect-redis.js';
import { requireRedis } from '../redis-ready.js';

/** `/healthz` (the process answers) and `/readyz` (Redis answers too): no key needed, for probes. */
export function healthRoutes({ redis, config }: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/healthz', {
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness',
        tags: ['health'],
        security: [],
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
      handler: async () => ({ status: 'ok' as const }),
    });
    app.get('/readyz', {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: Redis is reachable',
        tags: ['health'],
        security: [],
        response: { 200: z.object({ status: z.literal('ready') }), 503: errorBodySchema },
      },
      handler: async () => {
        try {
          await requireRedis(redis);
          await redis.ping();
        } catch (error) {
          throw new ApiError(
            503,
            'UNAVAILABLE',
            `${describeRedisTarget(config)} is not reachable (${(error as Error).message})`,
            {
              headers: { 'retry-after': '1' },
            },
          );
        }
        return { status: 'ready' as const };
      },
    });
  };
}
