import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiContext } from '../api-context.js';
import { requireRole } from '../auth/authenticate.js';
import { errorBodySchema } from '../errors.js';
import { requireRedis } from '../redis-ready.js';
import { metricsServed } from '../schemas/served-media.js';

/** `/metrics`: Prometheus text from the counters every process keeps in Redis, plus queue depths. Admin role. */
export function metricsRoute({
  apiKeys,
  authThrottle,
  config,
  metrics,
  queues,
  redis,
}: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('onRequest', requireRole({ apiKeys, defaultTenant: config.tenant, throttle: authThrottle }, 'admin'));
    app.get('/metrics', {
      schema: {
        operationId: 'getMetrics',
        served: metricsServed,
        summary: 'Prometheus metrics',
        description:
          'Runs by status, runs per graph version (finished by status, active), steps completed/failed/retried, step duration histogram, queue depth per queue, tokens and cost by model.',
        tags: ['operations'],
        response: {
          200: z.string().describe('Prometheus text format 0.0.4'),
          '4xx': errorBodySchema,
          '5xx': errorBodySchema,
        },
      },
      handler: async (_request, reply) => {
        await requireRedis(redis);
        const text = await metrics.render(queues);
        return reply
          .type('text/plain; version=0.0.4; charset=utf-8')
          .serializer((payload) => payload as string)
          .send(text);
      },
    });
  };
}
