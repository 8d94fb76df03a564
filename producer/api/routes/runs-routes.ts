import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { newRunId, runIdForIdempotencyKey, tenantRunId } from '../../../shared/contracts/ids.js';
import { parseSince } from '../../../shared/contracts/parse-since.js';
import { toRunRecord } from '../../../shared/store/redis-run-store.js';
import { withPartialOutput } from '../../client/partial-output.js';
import { isTerminal } from '../../../shared/contracts/run-record.js';
import type { ApiContext } from '../api-context.js';
import { principalOf } from '../auth/principal-of.js';
import { ApiError, errorBodySchema } from '../errors.js';
import {
  createRunQuerySchema,
  createRunBodySchema,
  deleteRunQuerySchema,
  eventsHeadersSchema,
  idempotencyHeadersSchema,
  listRunsQuerySchema,
  messagesSchema,
  resumeBodySchema,
  runIdParamsSchema,
  runListSchema,
  runRecordSchema,
  runResultSchema,
  stepsSchema,
} from '../schemas/run-schemas.js';
import { readRunResult } from '../../../shared/store/read-run-result.js';
import { streamRunEvents } from '../sse.js';
import { ownRunOf } from './own-run.js';
import { eventsServed } from '../schemas/served-media.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/** The run routes of docs/reference/http-api.md, scoped to the caller's tenant. */
export function runsRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { client, store, inflight } = context;

  const ownRun = ownRunOf(store);

  return async (app) => {
    app.post('/v1/runs', {
      schema: {
        operationId: 'enqueueRun',
        summary: 'Enqueue a run',
        description:
          'Creates the run (queued) and hands it to the workers. The same Idempotency-Key (header or body) returns the same run and adds nothing twice; a replay carries `Idempotent-Replayed: true`. 429 when the tenant has AGENTQ_TENANT_MAX_INFLIGHT runs in flight.',
        tags: ['runs'],
        headers: idempotencyHeadersSchema,
        querystring: createRunQuerySchema,
        body: createRunBodySchema,
        response: { 202: runRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        const { tenant } = principalOf(request);
        const { tenant: _ignored, ...body } = request.body;
        const headerKey = request.headers['idempotency-key'];
        if (headerKey !== undefined && body.idempotencyKey !== undefined && headerKey !== body.idempotencyKey) {
          throw new ApiError(
            400,
            'INVALID_INPUT',
            'the Idempotency-Key header and body.idempotencyKey differ; send only one of them',
          );
        }
        const idempotencyKey = headerKey ?? body.idempotencyKey;
        // An id in agentq's namespace (run_…, bat_…) was refused by the body's schema, on the string alone
        // (no existing run is ever probed). A client-chosen runId is scoped by tenant (tenantRunId), so it
        // cannot meet another tenant's run.
        const { runId: name, ...fields } = body;
        const runId =
          name !== undefined
            ? tenantRunId(tenant, name)
            : idempotencyKey
              ? runIdForIdempotencyKey(tenant, idempotencyKey)
              : newRunId();
        const existing = await store.reads.get(runId);
        if (existing && existing.tenant !== tenant) {
          // Only reachable for a run a trusted producer enqueued straight onto the intake queue under another tenant.
          throw new ApiError(409, 'CONFLICT', `run id ${runId} is taken; choose another runId`);
        }
        // A replay returns its run whatever the workers serve now. The in-flight cap, fair share and the
        // storage budget are the admission's (TenantAdmission), as for every other way a run is created.
        const queueUnserved = request.query.queueUnserved || Boolean(existing);
        const record = await client.enqueue(
          { ...fields, tenant, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) },
          { queueUnserved, derivedRunId: runId },
        );
        if (existing) reply.header('idempotent-replayed', 'true');
        return reply.code(202).header('location', `/v1/runs/${record.id}`).send(record);
      },
    });

    app.get('/v1/runs', {
      schema: {
        operationId: 'listRuns',
        summary: "List the caller's runs",
        description:
          'Newest first. A full page carries `nextCursor`; pass it as `cursor` for the next page. `status=failed&error=PROVIDER_ERROR&since=1h` lists the dead letters of an outage.',
        tags: ['runs'],
        querystring: listRunsQuerySchema,
        response: { 200: runListSchema, ...errors },
      },
      handler: async (request) => {
        const { tenant } = principalOf(request);
        const { cursor, error: errorCode, since, ...filter } = request.query;
        try {
          return await store.reads.list(tenant, {
            ...filter,
            ...(errorCode === undefined ? {} : { errorCode }),
            ...(since === undefined ? {} : { since: parseSince(since) }),
            ...(cursor === undefined ? {} : { cursor }),
          });
        } catch (error) {
          // A forged cursor can decode to arguments Redis rejects: that is the caller's cursor, not a fault here.
          if (cursor !== undefined && error instanceof Error && error.name === 'ReplyError') {
            throw new ApiError(400, 'INVALID_INPUT', `cursor '${cursor}' is not one this API returned`);
          }
          throw error;
        }
      },
    });

    app.get('/v1/runs/:id', {
      schema: {
        operationId: 'getRun',
        summary: 'Get a run (poll)',
        description: 'The same run record as `agentq status --json`.',
        tags: ['runs'],
        params: runIdParamsSchema,
        response: { 200: runRecordSchema, ...errors },
      },
      handler: async (request) =>
        withPartialOutput(toRunRecord(await ownRun(request, request.params.id)), (id) => store.reads.state(id)),
    });

    app.get('/v1/runs/:id/messages', {
      schema: {
        operationId: 'getRunMessages',
        summary: "A run's message history",
        tags: ['runs'],
        params: runIdParamsSchema,
        response: { 200: messagesSchema, ...errors },
      },
      handler: async (request) => {
        const meta = await ownRun(request, request.params.id);
        return { messages: await store.reads.messages(meta.id) };
      },
    });

    app.get('/v1/runs/:id/result', {
      schema: {
        operationId: 'getRunResult',
        summary: "A run's result object",
        description:
          "What the run produced, in one object: the answer, every tool execution (arguments and result), the model's responses before its final one, the sources, why the model's last response ended (finishReason), usage and error. A conversation's earlier turns are left out. Readable in every status (a running run's so far).",
        tags: ['runs'],
        params: runIdParamsSchema,
        response: { 200: runResultSchema, ...errors },
      },
      handler: async (request) => readRunResult(store, await ownRun(request, request.params.id)),
    });

    app.get('/v1/runs/:id/steps', {
      schema: {
        operationId: 'getRunSteps',
        summary: "A run's committed steps",
        tags: ['runs'],
        params: runIdParamsSchema,
        response: { 200: stepsSchema, ...errors },
      },
      handler: async (request) => {
        const meta = await ownRun(request, request.params.id);
        return { steps: await store.reads.steps(meta.id) };
      },
    });

    app.get('/v1/runs/:id/events', {
      schema: {
        operationId: 'streamRunEvents',
        served: eventsServed,
        summary: "A run's events (Server-Sent Events)",
        description:
          'text/event-stream: one SSE event per run event (`id` = stream id, `event` = type, `data` = JSON {id, type, data}); all past events first, then live ones; the stream ends after `run-end`. Reconnect with `Last-Event-ID` to resume after that event. Live model text comes as `token` events (no id; data {type, runId, step, task, node, attempt, call, index, text}) after the committed backlog; a `token-reset` opens each attempt, so drop partial text of that step when it comes. Tokens are not stored: the committed message is the record.',
        tags: ['runs'],
        params: runIdParamsSchema,
        headers: eventsHeadersSchema,
        response: { ...errors },
      },
      handler: async (request, reply) => {
        const meta = await ownRun(request, request.params.id);
        await streamRunEvents({
          request,
          reply,
          store,
          events: context.events,
          streams: context.streams,
          tenant: meta.tenant,
          runId: meta.id,
          after: request.headers['last-event-id'] ?? '0-0',
          tokens: context.tokens,
          signal: context.closing,
        });
      },
    });

    app.delete('/v1/runs/:id', {
      schema: {
        operationId: 'cancelRun',
        summary: 'Cancel a run (or purge a finished one)',
        description:
          'Cancels the run: 200 with the record when it is finished now (a queued or waiting run is cancelled at once), 202 while it is `cancelling` (the running step is aborted at its boundary). With `?purge=true` a run that is finished (or just got cancelled) is deleted: 204.',
        tags: ['runs'],
        params: runIdParamsSchema,
        querystring: deleteRunQuerySchema,
        response: { 200: runRecordSchema, 202: runRecordSchema, 204: z.null().describe('purged'), ...errors },
      },
      handler: async (request, reply) => {
        const meta = await ownRun(request, request.params.id);
        const record = isTerminal(meta.status)
          ? await withPartialOutput(toRunRecord(meta), (id) => store.reads.state(id))
          : await client.cancel(meta.id);
        if (request.query.purge && isTerminal(record.status)) {
          await client.purge(meta.id);
          await inflight.release(meta.tenant, meta.id);
          return reply.code(204).send(null);
        }
        return reply.code(isTerminal(record.status) ? 200 : 202).send(record);
      },
    });

    app.post('/v1/runs/:id/retry', {
      schema: {
        operationId: 'retryRun',
        summary: 'Retry a failed run from its last commit',
        tags: ['runs'],
        params: runIdParamsSchema,
        response: { 202: runRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        const meta = await ownRun(request, request.params.id);
        if (meta.status !== 'failed')
          throw new ApiError(
            409,
            'CONFLICT',
            `run ${request.params.id} is ${meta.status}; only a failed run can be retried`,
          );
        // In flight again: the retry passes the admission (the tenant's in-flight cap) in client.retry.
        return reply.code(202).send(await client.retry(meta.id));
      },
    });

    app.post('/v1/runs/:id/resume', {
      schema: {
        operationId: 'resumeRun',
        summary: 'Answer an interrupt',
        description: 'For a `waiting` run: the step that asked runs again and receives `value`.',
        tags: ['runs'],
        params: runIdParamsSchema,
        body: resumeBodySchema,
        response: { 202: runRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        const meta = await ownRun(request, request.params.id);
        return reply.code(202).send(await client.resume(meta.id, request.body.value));
      },
    });
  };
}
