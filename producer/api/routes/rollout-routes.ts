import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiContext } from '../api-context.js';
import { checkRole } from '../auth/authenticate.js';
import { principalOf } from '../auth/principal-of.js';
import { ApiError, errorBodySchema } from '../errors.js';

const version = z.string().min(1).max(64);
const rolloutAnswer = z.object({
  graph: z.string(),
  current: z.string().nullable().describe('the version new runs get; null: none set (each worker runs its latest)'),
  ramp: z
    .object({ version: z.string(), percent: z.number().int().min(0).max(100) })
    .nullable()
    .describe('the version a share of new runs get instead, and that share (0: paused); null: nothing ramps'),
  updatedAt: z.number().nullable(),
});
const graphParam = z.object({ name: z.string().min(1).max(128) });
const answers = { 200: rolloutAnswer, '4xx': errorBodySchema, '5xx': errorBodySchema };
const RULES =
  'A version no live worker serves is refused (409 ROLLOUT_VERSION_UNSERVED, naming the served versions). Runs already created keep their version; the change applies to runs created after it (each producer reads rollouts at most once a second). Admin role.';

/**
 * Graph rollouts (admin role: the deployment's decision, for every tenant's runs): per graph name the
 * version new runs get, and a ramping version for a share of them (docs/guides/rolling-out-graph-versions.md).
 */
export function rolloutRoutes({ client }: Pick<ApiContext, 'client'>): FastifyPluginAsyncZod {
  return async (app) => {
    const adminOnly = async (request: FastifyRequest) => {
      const refused = checkRole(principalOf(request), 'admin');
      if (refused) throw refused;
    };
    const { rollouts } = client;

    app.get('/v1/graphs/rollouts', {
      schema: {
        operationId: 'listGraphRollouts',
        summary: "Every graph's rollout (admin)",
        tags: ['admin'],
        response: {
          200: z.object({ rollouts: z.array(rolloutAnswer) }),
          '4xx': errorBodySchema,
          '5xx': errorBodySchema,
        },
      },
      onRequest: adminOnly,
      handler: async () => ({ rollouts: await rollouts.list() }),
    });

    app.get('/v1/graphs/:name/rollout', {
      schema: {
        operationId: 'getGraphRollout',
        summary: "A graph's rollout (admin)",
        description: 'Its current version and its ramping version with a percent; nulls when none is set.',
        tags: ['admin'],
        params: graphParam,
        response: answers,
      },
      onRequest: adminOnly,
      handler: async (request) => rollouts.get(request.params.name),
    });

    app.put('/v1/graphs/:name/rollout', {
      schema: {
        operationId: 'setGraphRollout',
        summary: "Set a graph's current version or ramp (admin)",
        description: `Sets the current version, starts or changes the ramp (its version, its percent of new runs: a whole number 0-100), or ends it (\`"ramp": null\`); a field left out stays as it is. A new run that names no graphVersion gets the ramping version when the first four bytes of the SHA-256 of its run id, modulo 100, are below the percent, else the current one. A ramp needs a current version (409 CONFLICT). ${RULES}`,
        tags: ['admin'],
        params: graphParam,
        body: z
          .object({
            current: version.optional(),
            ramp: version.nullable().optional(),
            percent: z.number().int().min(0).max(100).optional(),
          })
          .strict(),
        response: answers,
      },
      onRequest: adminOnly,
      handler: async (request) => rollouts.set(request.params.name, request.body),
    });

    app.post('/v1/graphs/:name/rollout/promote', {
      schema: {
        operationId: 'promoteGraphRollout',
        summary: 'Make the ramping version current (admin)',
        description: `Every new run gets the ramping version from now on; nothing ramps any more. 409 CONFLICT when nothing ramps. ${RULES}`,
        tags: ['admin'],
        params: graphParam,
        response: answers,
      },
      onRequest: adminOnly,
      handler: async (request) => rollouts.promote(request.params.name),
    });

    app.post('/v1/graphs/:name/rollout/pause', {
      schema: {
        operationId: 'pauseGraphRollout',
        summary: 'Pause the ramp at 0 % (admin)',
        description: `No new run gets the ramping version until its percent is set again (PUT); its version stays named. 409 CONFLICT when nothing ramps. ${RULES}`,
        tags: ['admin'],
        params: graphParam,
        response: answers,
      },
      onRequest: adminOnly,
      handler: async (request) => rollouts.pause(request.params.name),
    });

    app.post('/v1/graphs/:name/rollout/rollback', {
      schema: {
        operationId: 'rollBackGraphRollout',
        summary: 'End the ramp, optionally moving the current version back (admin)',
        description: `Every new run gets the current version (\`current\`: this one, e.g. the version before a promote). ${RULES}`,
        tags: ['admin'],
        params: graphParam,
        body: z.object({ current: version.optional() }).strict().optional(),
        response: answers,
      },
      onRequest: adminOnly,
      handler: async (request) => rollouts.rollback(request.params.name, request.body ?? {}),
    });

    app.delete('/v1/graphs/:name/rollout', {
      schema: {
        operationId: 'clearGraphRollout',
        summary: "Remove a graph's rollout (admin)",
        description:
          'New runs that name no version get none at creation again: the worker that takes one in runs its latest. 204; 404 when the graph had none.',
        tags: ['admin'],
        params: graphParam,
        response: { 204: z.null().describe('removed'), '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      onRequest: adminOnly,
      handler: async (request, reply) => {
        if (!(await rollouts.clear(request.params.name)))
          throw new ApiError(404, 'NOT_FOUND', `graph ${request.params.name} has no rollout to remove`);
        return reply.code(204).send(null);
      },
    });
  };
}
