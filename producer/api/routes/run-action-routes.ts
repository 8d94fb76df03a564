import { z } from 'zod';
import { toRunRecord } from '../../../shared/store/redis-run-store.js';
import { withPartialOutput } from '../../client/partial-output.js';
import { isTerminal } from '../../../shared/contracts/run-record.js';
import type { ApiContext } from '../api-context.js';
import { ApiError, errorBodySchema } from '../errors.js';
import { deleteRunQuerySchema, resumeBodySchema, runIdParamsSchema, runRecordSchema } from '../schemas/run-schemas.js';
import { ownRunOf } from './own-run.js';
import type { RouteScope } from './route-scope.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/** What a caller does to a run: cancel (or purge), retry, resume. */
export function registerRunActionRoutes(app: RouteScope, context: ApiContext): void {
  const { client, store, inflight } = context;
  const ownRun = ownRunOf(store);

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
}
