import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { parseSince } from '../../../shared/contracts/parse-since.js';
import type { ApiContext } from '../api-context.js';
import { errorBodySchema } from '../errors.js';
import { runIdParamsSchema, runRecordSchema } from '../schemas/run-schemas.js';
import {
  forkBodySchema,
  queueUnservedQuerySchema,
  replayBodySchema,
  replayReportSchema,
  retryFailedBodySchema,
  retryFailedSummarySchema,
} from '../schemas/time-travel-schemas.js';
import { principalOf } from '../auth/principal-of.js';
import { forkSetByPolicy } from '../run-policy.js';
import { ownRunOf } from './own-run.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/** Time travel: fork a run from a step, replay it against its recording, retry failed runs in bulk. */
export function timeTravelRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { client, store } = context;
  const ownRun = ownRunOf(store);

  return async (app) => {
    app.post('/v1/runs/:id/fork', {
      schema: {
        operationId: 'forkRun',
        summary: 'Fork a run from one of its steps',
        description:
          'A new run whose state, history and step log are this run’s as committed just before step `from` (its index in GET …/steps); the steps before it are inherited (`inheritedFrom`), not run again; the original is untouched. For finished runs and runs waiting on an interrupt (409 otherwise). `set` replaces state keys (400 naming a key the state does not have, a value of another kind, or a model setting or image (`settings`, `queryImages`) a run’s input would not accept); 404 for an unknown run or step; 409 RECORDING_UNAVAILABLE when the run did not record its steps (AGENTQ_RECORDING).',
        tags: ['runs'],
        params: runIdParamsSchema,
        querystring: queueUnservedQuerySchema,
        body: forkBodySchema,
        response: { 202: runRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        const meta = await ownRun(request, request.params.id);
        const { from, set, graphVersion } = request.body;
        const record = await client.fork(meta.id, {
          from,
          ...(set ? { set: forkSetByPolicy(context, request, { graph: meta.graph, set }) } : {}),
          ...(graphVersion ? { graphVersion } : {}),
          queueUnserved: request.query.queueUnserved,
        });
        return reply.code(202).header('location', `/v1/runs/${record.id}`).send(record);
      },
    });

    app.post('/v1/runs/:id/replay', {
      schema: {
        operationId: 'replayRun',
        summary: 'Replay a finished run against its recording',
        description:
          'A new run of the same input through the graph (this run’s version, or `graphVersion`) whose model and tool calls are answered by this run’s recording: no paid call. It fails with REPLAY_DIVERGED at the first call that asks something else (`continueLive`: it notes the divergence and goes on live). GET /v1/runs/{replay id}/replay-report gives the verdict. 409 RECORDING_UNAVAILABLE, naming what is missing, when the run did not record its calls, its recording expired, or it stopped at AGENTQ_RECORDING_MAX_BYTES.',
        tags: ['runs'],
        params: runIdParamsSchema,
        querystring: queueUnservedQuerySchema,
        body: replayBodySchema,
        response: { 202: runRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        const meta = await ownRun(request, request.params.id);
        const { graphVersion, continueLive } = request.body;
        const record = await client.replay(meta.id, {
          ...(graphVersion ? { graphVersion } : {}),
          ...(continueLive ? { continueLive } : {}),
          queueUnserved: request.query.queueUnserved,
        });
        return reply.code(202).header('location', `/v1/runs/${record.id}`).send(record);
      },
    });

    app.get('/v1/runs/:id/replay-report', {
      schema: {
        operationId: 'getReplayReport',
        summary: 'The verdict of a replay run',
        description:
          '`diverged` and, when true, the first divergence: `step` (as the original’s step log numbers it), `node`, `reason` and `diff` (recorded against replayed value, by JSON path). `outcome` is same, diverged, failed or pending. 400 for a run that is not a replay.',
        tags: ['runs'],
        params: runIdParamsSchema,
        response: { 200: replayReportSchema, ...errors },
      },
      handler: async (request) => {
        const meta = await ownRun(request, request.params.id);
        return client.replayReport(meta.id);
      },
    });

    app.post('/v1/runs/retry', {
      schema: {
        operationId: 'retryRuns',
        summary: 'Retry failed runs in bulk',
        description:
          'Every failed run of the caller that matches (`error` code, created `since`, `graph`) is retried from its failed step, at `ratePerSecond`; `dryRun` only counts and lists them. Each retried run keeps `retryOf` (the link to its earlier attempt). A run is retried once even when two such requests race.',
        tags: ['runs'],
        body: retryFailedBodySchema,
        response: { 200: retryFailedSummarySchema, ...errors },
      },
      handler: async (request) => {
        const { tenant } = principalOf(request);
        const { error, since, graph, dryRun, ratePerSecond, limit } = request.body;
        return client.retryFailed(
          {
            tenant,
            ...(error ? { errorCode: error } : {}),
            ...(since === undefined ? {} : { since: parseSince(since) }),
            ...(graph ? { graph } : {}),
          },
          { dryRun: dryRun ?? false, ratePerSecond: ratePerSecond ?? 20, limit: limit ?? 200 },
        );
      },
    });
  };
}
