import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { RUN_STATUSES } from '../../../shared/contracts/run-record.js';
import type { ApiContext } from '../api-context.js';
import { admitByPolicy } from '../run-policy.js';
import { ApiError, errorBodySchema } from '../errors.js';
import { scheduleCreateServed, schedulePatchServed } from '../schemas/served-media.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

function tenantOf(request: FastifyRequest): string {
  if (!request.principal)
    throw new AgentqError('INTERNAL', 'route reached without authentication (a scope lacks its auth hook)');
  return request.principal.tenant;
}

function notFound(scheduleId: string): ApiError {
  return new ApiError(
    404,
    'NOT_FOUND',
    `schedule ${scheduleId} not found (it may never have existed, or it was deleted)`,
  );
}

const scheduledRunSchema = z.object({ runId: z.string(), scheduledFor: z.string() });

const scheduleRecordSchema = z
  .object({
    id: z.string(),
    tenant: z.string(),
    name: z.string().optional(),
    graph: z.string(),
    graphVersion: z.string().optional(),
    input: z.unknown(),
    options: z.object({}).loose().optional(),
    priority: z.number().optional(),
    cron: z.string().optional(),
    tz: z.string().optional(),
    everyMs: z.number().optional(),
    startAt: z.string().optional(),
    endAt: z.string().optional(),
    paused: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    nextRunAt: z.string().nullable().describe('when the next tick starts a run; null while paused or after endAt'),
    lastRun: scheduledRunSchema.nullable().describe('the run the latest tick started'),
  })
  .loose()
  .describe('Schedule');

const idParams = z.object({ id: z.string().min(1).max(128) });

const SPEC_DESCRIPTION =
  '`{"graph", "input", "cron": "0 9 * * 1-5", "tz": "Europe/Berlin"}` or `{"graph", "input", "everyMs": 60000}`; optional `startAt`/`endAt` (ISO 8601), `options`, `priority`, `name`, `paused`. One run starts per tick however many workers run; each run links back (`scheduleId` on the run record).';

/**
 * Scheduled runs: `POST/GET /v1/schedules`, `GET/PATCH/DELETE /v1/schedules/:id`,
 * `GET /v1/schedules/:id/runs`. Scoped by the caller's tenant: another tenant's schedule is a 404.
 */
export function schedulesRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { client, store } = context;
  return async (app) => {
    app.post('/v1/schedules', {
      schema: {
        operationId: 'createSchedule',
        served: scheduleCreateServed,
        summary: 'Create a schedule',
        description: SPEC_DESCRIPTION,
        tags: ['schedules'],
        // Validated by parseScheduleSpec so the 400 names the field and what it accepts.
        body: z.unknown(),
        response: { 201: scheduleRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        // Its ticks' runs are held to the policy now; a body without a graph is parseScheduleSpec's 400.
        const spec = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as {
          graph?: unknown;
          input?: unknown;
        };
        if (typeof spec.graph === 'string') admitByPolicy(context, request, { graph: spec.graph, input: spec.input });
        const schedule = await client.schedules.create(request.body, {
          tenant: tenantOf(request),
          // Its ticks' runs are charged to this key's rate limit, as its own requests are.
          ...(request.principal?.keyId ? { keyId: request.principal.keyId } : {}),
        });
        return reply.code(201).header('location', `/v1/schedules/${schedule.id}`).send(schedule);
      },
    });

    app.get('/v1/schedules', {
      schema: {
        operationId: 'listSchedules',
        summary: "Your tenant's schedules",
        tags: ['schedules'],
        response: { 200: z.object({ schedules: z.array(scheduleRecordSchema) }), ...errors },
      },
      handler: async (request) => ({ schedules: await client.schedules.list({ tenant: tenantOf(request) }) }),
    });

    app.get('/v1/schedules/:id', {
      schema: {
        operationId: 'getSchedule',
        summary: 'A schedule, with its last and next runs',
        tags: ['schedules'],
        params: idParams,
        response: { 200: scheduleRecordSchema, ...errors },
      },
      handler: async (request) => {
        const schedule = await client.schedules.get(request.params.id, { tenant: tenantOf(request) });
        if (!schedule) throw notFound(request.params.id);
        return schedule;
      },
    });

    app.get('/v1/schedules/:id/runs', {
      schema: {
        operationId: 'listScheduleRuns',
        summary: "The runs a schedule's ticks started",
        description:
          "Newest first, the last 100; `status` is the run's now (null when the run has expired from the store).",
        tags: ['schedules'],
        params: idParams,
        response: {
          200: z.object({ runs: z.array(scheduledRunSchema.extend({ status: z.enum(RUN_STATUSES).nullable() })) }),
          ...errors,
        },
      },
      handler: async (request) => {
        const runs = await client.schedules.runs(request.params.id, { tenant: tenantOf(request) });
        if (!runs) throw notFound(request.params.id);
        const metas = await Promise.all(runs.map((run) => store.reads.get(run.runId)));
        return { runs: runs.map((run, index) => ({ ...run, status: metas[index]?.status ?? null })) };
      },
    });

    app.patch('/v1/schedules/:id', {
      schema: {
        operationId: 'updateSchedule',
        served: schedulePatchServed,
        summary: 'Change, pause or resume a schedule',
        description:
          'Any field of the create body; `null` clears an optional one; `{"paused": true}` pauses (no ticks), `{"paused": false}` resumes. Giving `cron` drops `everyMs` and the other way round.',
        tags: ['schedules'],
        params: idParams,
        body: z.unknown(),
        response: { 200: scheduleRecordSchema, ...errors },
      },
      handler: async (request) => {
        const schedule = await client.schedules.update(request.params.id, request.body ?? {}, {
          tenant: tenantOf(request),
        });
        if (!schedule) throw notFound(request.params.id);
        return schedule;
      },
    });

    app.delete('/v1/schedules/:id', {
      schema: {
        operationId: 'deleteSchedule',
        summary: 'Delete a schedule',
        description: 'No more ticks; the runs it started stay.',
        tags: ['schedules'],
        params: idParams,
        response: { 204: z.null().describe('deleted'), ...errors },
      },
      handler: async (request, reply) => {
        if (!(await client.schedules.delete(request.params.id, { tenant: tenantOf(request) })))
          throw notFound(request.params.id);
        return reply.code(204).send(null);
      },
    });
  };
}
