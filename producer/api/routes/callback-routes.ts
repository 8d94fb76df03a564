import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { callbackEventName, verifyCallbackToken } from '../../../shared/store/events/callback-token.js';
import { interruptStepOf, RunWaits } from '../../../shared/store/events/run-waits.js';
import type { ApiContext } from '../api-context.js';
import { errorBodySchema } from '../errors.js';
import { limitRate } from '../limits/limit-rate.js';
import { resumeBodySchema } from '../schemas/run-schemas.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

const completedSchema = z
  .object({
    runId: z.string(),
    waitId: z.string().describe('the wait of the run it completed (`s3.t0:1`; `s3.t0:i`: the interrupt of step s3.t0)'),
  })
  .describe('CallbackCompleted');

const callbackBodySchema = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string(), z.number(), z.boolean(), z.null()])
  .optional()
  .describe('CallbackBody: any JSON, what the waiting step receives (`{ body }`)');

/**
 * `POST /v1/callbacks/:token`: a third party completes a step's `context.callback` wait with a JSON body.
 * No API key: the token is the credential (signed with AGENTQ_CALLBACK_SECRET, scoped to one wait of one
 * run, expiring, and taken once). Rate-limited per caller address, body-limited like every route.
 */
export function callbackRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { client, store, config, rateLimiter, redis } = context;
  const waits = new RunWaits(redis, store.keys, config.retentionSeconds);
  return async (app) => {
    app.addHook(
      'onRequest',
      limitRate(rateLimiter, redis, (request) => `callback:${request.ip}`),
    );
    app.post('/v1/callbacks/:token', {
      schema: {
        operationId: 'completeCallback',
        summary: 'Complete a step’s callback wait (no API key)',
        description:
          'The URL a node got from `context.callback`: its JSON body becomes the result of the step’s `wait()`, and the step wakes. An interrupt’s `callbackUrl` (`context.interrupt(request, { callback })`) takes the resume body `{ "value": … }` and answers the interrupt as `POST /v1/runs/:id/resume` does. Callable without an API key, once: 401 CALLBACK_INVALID for an altered token, 410 CALLBACK_EXPIRED past its expiry, 409 CALLBACK_USED once called (or, for an interrupt, once answered through the API), 409 CONFLICT when the run is over; none of them changes anything.',
        tags: ['runs'],
        security: [],
        params: z.object({ token: z.string().min(1).max(2048) }),
        body: callbackBodySchema,
        response: { 202: completedSchema, ...errors },
      },
      handler: async (request, reply) => {
        const { token } = request.params;
        if (!config.callbackSecret)
          throw new AgentqError('CALLBACK_INVALID', 'this API has no AGENTQ_CALLBACK_SECRET: it takes no callback');
        const claims = verifyCallbackToken(token, config.callbackSecret);
        const { runId, waitId, tenant } = claims;
        if (Date.now() >= claims.expiresAt)
          throw new AgentqError(
            'CALLBACK_EXPIRED',
            `the callback URL expired at ${new Date(claims.expiresAt).toISOString()}`,
          );
        const meta = await store.reads.get(runId);
        if (!meta || meta.tenant !== tenant)
          throw new AgentqError('CONFLICT', `run ${runId} is gone (expired or purged): the callback changes nothing`);
        const interruptStep = interruptStepOf(waitId);
        if (interruptStep !== null) {
          // An interrupt's URL: the API's resume with this body, of that interrupt only (single-use against both).
          await client.resume(runId, resumeValueOf(request.body), { stepId: interruptStep });
          return reply.code(202).send({ runId, waitId });
        }
        const event = {
          id: `cb_${randomUUID()}`,
          name: callbackEventName(token),
          data: request.body ?? null,
          sentAt: new Date().toISOString(),
        };
        const result = await waits.complete(runId, waitId, event, client.stepQueues);
        if (result === 'used') {
          const outcome = await waits.outcome(runId, waitId);
          if (outcome && 'timedOut' in outcome)
            throw new AgentqError('CALLBACK_EXPIRED', 'the callback’s wait timed out: the URL no longer works');
          throw new AgentqError('CALLBACK_USED', 'this callback URL was called already: the wait has its result');
        }
        if (result !== 'delivered')
          throw new AgentqError('CONFLICT', `run ${runId} is over or no longer waits on ${waitId}: nothing changed`);
        return reply.code(202).send({ runId, waitId });
      },
    });
  };
}

/** The answer in an interrupt URL's body: the same `{ value }` as `POST /v1/runs/:id/resume` takes. */
function resumeValueOf(body: unknown): unknown {
  const parsed = resumeBodySchema.safeParse(body);
  if (!parsed.success)
    throw new AgentqError(
      'INVALID_INPUT',
      'an interrupt’s callback URL takes the resume body: { "value": <the answer, any JSON> }',
    );
  return parsed.data.value;
}
