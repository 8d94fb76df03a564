import { newRunId, runIdForIdempotencyKey, tenantRunId } from '../../../shared/contracts/ids.js';
import { parseSince } from '../../../shared/contracts/parse-since.js';
import type { ApiContext } from '../api-context.js';
import { admitByPolicy } from '../run-policy.js';
import { principalOf } from '../auth/principal-of.js';
import { ApiError, errorBodySchema } from '../errors.js';
import {
  createRunQuerySchema,
  createRunBodySchema,
  idempotencyHeadersSchema,
  listRunsQuerySchema,
  runListSchema,
  runRecordSchema,
} from '../schemas/run-schemas.js';
import type { RouteScope } from './route-scope.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/** `POST /v1/runs` (enqueue) and `GET /v1/runs` (the caller's runs, paged). */
export function registerRunCollectionRoutes(app: RouteScope, context: ApiContext): void {
  const { client, store } = context;

  app.post('/v1/runs', {
    schema: {
      operationId: 'enqueueRun',
      summary: 'Enqueue a run',
      description:
        "Creates the run (queued) and hands it to the workers. 403 POLICY_DENIED when the tenant's policy (AGENTQ_TENANT_POLICY_FILE) does not allow the graph or an input field (system, tools, guardrails, variables, images, model settings). The same Idempotency-Key (header or body) returns the same run and adds nothing twice; a replay carries `Idempotent-Replayed: true`. 429 when the tenant has AGENTQ_TENANT_MAX_INFLIGHT runs in flight.",
      tags: ['runs'],
      headers: idempotencyHeadersSchema,
      querystring: createRunQuerySchema,
      body: createRunBodySchema,
      response: {
        202: runRecordSchema,
        403: errorBodySchema.describe(
          "POLICY_DENIED: the tenant's policy does not allow the graph or an input field; details name the field and the policy entry",
        ),
        ...errors,
      },
    },
    handler: async (request, reply) => {
      const { tenant } = principalOf(request);
      const { tenant: _ignored, ...body } = request.body;
      admitByPolicy(context, request, { graph: body.graph, input: body.input });
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
}
