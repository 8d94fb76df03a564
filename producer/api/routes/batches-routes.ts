import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { formatBatchResultsCsv, formatBatchResultsJsonl } from '../../cli/format-batch-results.js';
import type { ApiContext } from '../api-context.js';
import { admitByPolicy } from '../run-policy.js';
import { ApiError, errorBodySchema } from '../errors.js';
import {
  batchIdParamsSchema,
  batchRecordSchema,
  createBatchBodySchema,
  getBatchQuerySchema,
  jsonlUploadQuerySchema,
} from '../schemas/batch-schemas.js';
import { idempotencyHeadersSchema } from '../schemas/run-schemas.js';
import { parseQuestionLines } from '../../cli/parse-question-lines.js';
import { batchResultsServed, batchUploadServed, JSONL_TYPES } from '../schemas/served-media.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

function tenantOf(request: FastifyRequest): string {
  if (!request.principal)
    throw new AgentqError('INTERNAL', 'route reached without authentication (a scope lacks its auth hook)');
  return request.principal.tenant;
}

function notFound(batchId: string): ApiError {
  return new ApiError(404, 'NOT_FOUND', `batch ${batchId} not found (it may never have existed, or it expired)`);
}

/** A JSON Lines upload of `{id?, question}` lines (other keys ignored, as by the CLI), as the batch body (collection and options from the query). */
function parseJsonl(text: string, query: Record<string, unknown>): unknown {
  let questions;
  try {
    // The same reader as `agentq batch FILE`: a file one accepts, the other does.
    questions = parseQuestionLines(text);
  } catch (error) {
    throw new ApiError(400, 'INVALID_INPUT', `the JSONL upload: ${(error as Error).message}`);
  }
  const parsed = jsonlUploadQuerySchema.safeParse(query);
  if (!parsed.success)
    throw new ApiError(
      400,
      'INVALID_INPUT',
      `invalid query for a JSONL upload: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  const {
    collection,
    concurrency,
    max_iterations,
    citations,
    graph,
    providerBatch,
    answerCache,
    deadline,
    budgetUsd,
    modes,
  } = parsed.data;
  return {
    ...(collection ? { collection } : {}),
    questions,
    options: {
      ...(concurrency ? { concurrency } : {}),
      ...(max_iterations ? { max_iterations } : {}),
      ...(citations ? { citations: citations === 'true' } : {}),
      ...(graph ? { graph } : {}),
    },
    ...(providerBatch ? { providerBatch: providerBatch === 'true' } : {}),
    ...(answerCache ? { answerCache: answerCache === 'true' } : {}),
    ...(deadline ? { deadline } : {}),
    ...(budgetUsd ? { budgetUsd } : {}),
    ...(modes ? { modes: modes.split(',').map((mode) => mode.trim()) } : {}),
  };
}

/** Batch Q&A (docs/reference/http-api.md): `POST /v1/batches`, `GET /v1/batches/:id`, `DELETE /v1/batches/:id`. */
export function batchesRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { client } = context;

  const ownBatch = async (request: FastifyRequest, batchId: string) => {
    const batch = await client.batches.get(batchId);
    if (!batch || batch.tenant !== tenantOf(request)) throw notFound(batchId);
    return batch;
  };

  return async (app) => {
    app.addContentTypeParser([...JSONL_TYPES], { parseAs: 'string' }, (request, body, done) => {
      try {
        done(null, parseJsonl(String(body), request.query as Record<string, unknown>));
      } catch (error) {
        done(error as Error, undefined);
      }
    });

    app.post('/v1/batches', {
      schema: {
        operationId: 'createBatch',
        served: batchUploadServed,
        summary: 'Submit a batch of questions',
        description:
          'One run of `rag-agent` (or `options.graph`) per question, at most `options.concurrency` in flight. JSON, or a JSON Lines upload (`Content-Type: application/x-ndjson`, one `{"id"?, "question"}` per line, `collection`, `concurrency`, `providerBatch`, `deadline`, `budgetUsd` and `modes` in the query). The same Idempotency-Key returns the same batch and answers nothing twice. `"providerBatch": true` makes the model calls through the provider\'s Batch API at batch prices (422 PROVIDER_BATCH_UNSUPPORTED when the provider has none). A `deadline` or a `budgetUsd` plans the batch: the cheapest of the allowed `modes` (live, flex, batch) that meets them, re-planned as it measures; 400 BUDGET_EXCEEDED with the estimate when no mode fits the budget (nothing is created).',
        tags: ['batches'],
        headers: idempotencyHeadersSchema,
        body: createBatchBodySchema,
        response: { 202: batchRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        const key = request.headers['idempotency-key'];
        // Each question is a run of this graph whose input the batch builds (no system, tools or model of the caller's).
        admitByPolicy(context, request, { graph: request.body.options?.graph ?? 'rag-agent', input: {} });
        const { batch, created } = await client.batches.submit(request.body, {
          tenant: tenantOf(request),
          ...(key ? { idempotencyKey: key } : {}),
        });
        if (!created) reply.header('idempotent-replayed', 'true');
        return reply.code(202).header('location', `/v1/batches/${batch.id}`).send(batch);
      },
    });

    app.get('/v1/batches/:id', {
      schema: {
        operationId: 'getBatch',
        served: batchResultsServed,
        summary: 'A batch: progress, and results once finished',
        description:
          'The batch record (schema `Batch`), with `results` once it finished. `?format=jsonl` or `?format=csv` returns the results so far instead (one per question, in order, as text: no JSON schema for this 200).',
        tags: ['batches'],
        params: batchIdParamsSchema,
        querystring: getBatchQuerySchema,
        // The 200 schema documents the JSON answer; CSV and JSON Lines are strings with their own content
        // type, which fastify sends as they are (its serializer only handles JSON payloads).
        response: { 200: batchRecordSchema, ...errors },
      },
      handler: async (request, reply) => {
        const batch = await ownBatch(request, request.params.id);
        const { format } = request.query;
        const finished = batch.status !== 'running';
        if (format === 'json' && !finished) return batch;
        const results = (await client.batches.results(batch.id)) ?? [];
        if (format === 'csv') {
          reply.header('content-disposition', `attachment; filename="${batch.id}.csv"`);
          return reply.type('text/csv; charset=utf-8').send(formatBatchResultsCsv(results) as never);
        }
        if (format === 'jsonl')
          return reply.type('application/x-ndjson; charset=utf-8').send(formatBatchResultsJsonl(results) as never);
        return { ...batch, results };
      },
    });

    app.delete('/v1/batches/:id', {
      schema: {
        operationId: 'cancelBatch',
        summary: 'Cancel a batch',
        description:
          'No more questions are dispatched; the runs in flight are cancelled. Answered questions keep their answers.',
        tags: ['batches'],
        params: batchIdParamsSchema,
        response: { 200: batchRecordSchema, ...errors },
      },
      handler: async (request) => {
        await ownBatch(request, request.params.id);
        const batch = await client.batches.cancel(request.params.id);
        if (!batch) throw notFound(request.params.id);
        return batch;
      },
    });
  };
}
