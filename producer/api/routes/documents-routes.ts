import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  batchIdParamsSchema,
  deleteDocumentsQuerySchema,
  deleteDocumentsResultSchema,
  documentIdParamsSchema,
  documentListSchema,
  documentRecordSchema,
  ingestProgressSchema,
  listDocumentsQuerySchema,
} from '../schemas/document-schemas.js';
import { ingestClientFor } from '../../client/ingest-client-for.js';
import type { IngestClient } from '../../client/ingest-client.js';
import type { ApiContext } from '../api-context.js';
import { ApiError, errorBodySchema } from '../errors.js';
import { principalOf } from '../auth/principal-of.js';
import { registerDocumentUploadRoute } from './document-upload-route.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };
/** Files per upload request; more in one batch: use the CLI or several requests. */
const MAX_FILES = 1000;

/** Missing and foreign documents answer alike, so a tenant cannot learn which ids other tenants use. */
const documentNotFound = (id: string) =>
  new ApiError(404, 'NOT_FOUND', `document ${id} not found (it may never have existed, or it was deleted)`);

interface DocumentsRoutesOptions {
  /** @default one IngestClient per API context (ingestClientFor), closed with the app */
  ingest?: IngestClient;
}

/**
 * `POST /v1/documents` (multipart upload: one or more files, optional `collection` field),
 * `GET /v1/documents` (the caller's documents with their status), `GET /v1/documents/:id`,
 * `DELETE /v1/documents/:id` (the record and its chunks) and `GET /v1/documents/batches/:batchId`
 * (ingest progress), `DELETE /v1/documents?collection=…` (a collection's documents). Everything is scoped to the caller's tenant: another tenant's id answers 404.
 */
export function documentsRoutes(
  context: Pick<ApiContext, 'config'>,
  options: DocumentsRoutesOptions = {},
): FastifyPluginAsyncZod {
  return async (app) => {
    const ingest = options.ingest ?? ingestClientFor(context);
    if (!options.ingest) app.addHook('onClose', async () => ingest.close());
    // Only this plugin's routes parse multipart, whatever the JSON body limit. Sizes are counted by the
    // UploadReceiver as the bytes stream to Redis (AGENTQ_INGEST_MAX_BYTES per file, AGENTQ_UPLOAD_MAX_BYTES
    // per request); busboy's own file limit is one byte above, a backstop that never speaks first.
    await app.register(fastifyMultipart, {
      limits: { fileSize: context.config.ingestMaxBytes + 1, files: MAX_FILES, fields: 20, fieldSize: 1024 },
    });

    registerDocumentUploadRoute(app, { ingest, config: context.config });

    app.get('/v1/documents', {
      schema: {
        operationId: 'listDocuments',
        summary: "List the caller's documents",
        description:
          'Most recently updated first, with status (queued, indexing, indexed, failed), chunk count and error.',
        tags: ['documents'],
        querystring: listDocumentsQuerySchema,
        response: { 200: documentListSchema, ...errors },
      },
      handler: async (request) => {
        const { tenant } = principalOf(request);
        const { collection, status } = request.query;
        const documents = await ingest.listDocuments({ tenant, ...(collection === undefined ? {} : { collection }) });
        return {
          documents: status === undefined ? documents : documents.filter((document) => document.status === status),
        };
      },
    });

    app.get('/v1/documents/:id', {
      schema: {
        operationId: 'getDocument',
        summary: 'Get a document record',
        tags: ['documents'],
        params: documentIdParamsSchema,
        response: { 200: documentRecordSchema, ...errors },
      },
      handler: async (request) => {
        const record = await ingest.getDocument(request.params.id, { tenant: principalOf(request).tenant });
        if (!record) throw documentNotFound(request.params.id);
        return record;
      },
    });

    app.delete('/v1/documents/:id', {
      schema: {
        operationId: 'deleteDocument',
        summary: 'Delete a document and its chunks',
        tags: ['documents'],
        params: documentIdParamsSchema,
        response: { 204: z.null().describe('deleted'), ...errors },
      },
      handler: async (request, reply) => {
        if (!(await ingest.deleteDocument(request.params.id, { tenant: principalOf(request).tenant })))
          throw documentNotFound(request.params.id);
        return reply.code(204).send(null);
      },
    });

    app.delete('/v1/documents', {
      schema: {
        operationId: 'deleteDocuments',
        summary: 'Delete every document of a collection',
        description:
          "Deletes the documents of `collection` (required) and their chunks, for the caller's tenant only; answers how many. A collection with no documents answers `deleted: 0`.",
        tags: ['documents'],
        querystring: deleteDocumentsQuerySchema,
        response: { 200: deleteDocumentsResultSchema, ...errors },
      },
      handler: async (request) => {
        const { collection } = request.query;
        return {
          collection,
          deleted: await ingest.deleteDocuments({ collection, tenant: principalOf(request).tenant }),
        };
      },
    });

    app.get('/v1/documents/batches/:batchId', {
      schema: {
        operationId: 'getIngestBatch',
        summary: 'Progress of an upload batch',
        description:
          '`done` counts documents indexed (or unchanged), `failed` the others that finished; `finished` when both add up to `total`.',
        tags: ['documents'],
        params: batchIdParamsSchema,
        response: { 200: ingestProgressSchema, ...errors },
      },
      handler: async (request) => {
        const progress = await ingest.progress(request.params.batchId, { tenant: principalOf(request).tenant });
        if (!progress)
          throw new ApiError(
            404,
            'NOT_FOUND',
            `ingest batch ${request.params.batchId} not found (batches expire after AGENTQ_RETENTION_SECONDS)`,
          );
        return progress;
      },
    });
  };
}
