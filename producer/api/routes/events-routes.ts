import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf } from '../auth/principal-of.js';
import type { ApiContext } from '../api-context.js';
import { errorBodySchema } from '../errors.js';
import { ownRunOf } from './own-run.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

const sendEventBodySchema = z
  .object({
    runId: z.string().min(1).max(256).optional().describe('the run to send it to (or give `key`)'),
    key: z.string().min(1).max(256).optional().describe('a correlation key of the tenant: every run waiting on it'),
    name: z.string().min(1).max(256).describe('the event name a `context.waitFor` waits for'),
    data: z.unknown().optional().describe('the payload the waiting step receives (`event.data`)'),
  })
  .refine((body) => (body.runId === undefined) !== (body.key === undefined), {
    message: 'give runId or key, not both',
  })
  .describe('SendEvent');

const sentEventSchema = z
  .object({
    eventId: z.string(),
    reached: z.number().int().describe('waiting runs it woke now (each run at most once)'),
    stored: z.boolean().describe('kept for waits still to come (AGENTQ_EVENT_WINDOW_MS)'),
    expiresAt: z.string().nullable().describe('until when it is kept; null when it is not'),
  })
  .describe('SentEvent');

/**
 * `POST /v1/events`: an event to a run of the caller's tenant or to one of its correlation keys; the steps
 * waiting for it (`context.waitFor`) wake with it.
 */
export function eventsRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { client, store } = context;
  const ownRun = ownRunOf(store);
  return async (app) => {
    app.post('/v1/events', {
      schema: {
        operationId: 'sendEvent',
        summary: 'Send an event to a run or a correlation key',
        description:
          'Wakes the steps waiting for it (`context.waitFor(name, { match, key })`): each waiting run at most once. It is also kept for AGENTQ_EVENT_WINDOW_MS (1 hour by default), and a wait that comes later takes it. 404 for a run that is not the tenant’s.',
        tags: ['runs'],
        body: sendEventBodySchema,
        response: { 202: sentEventSchema, ...errors },
      },
      handler: async (request, reply) => {
        const { tenant } = principalOf(request);
        const { runId, key, name, data } = request.body;
        const target = runId === undefined ? { key: key! } : { runId: (await ownRun(request, runId)).id };
        return reply.code(202).send(await client.sendEvent({ ...target, name, data, tenant }));
      },
    });
  };
}
