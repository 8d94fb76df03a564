import fastifyMultipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';
import {
  batchIdParamsSchema,
  deleteDocumentsQuerySchema,
  deleteDocumentsResultSchema,
  documentIdParamsSchema,
  documentListSchema,
  documentRecordSchema,
  ingestBatchSchema,
  ingestProgressSchema,
  listDocumentsQuerySchema,
} from '../schemas/document-schemas.js';
import { ingestClientFor } from '../../client/ingest-client-for.js';
import type { IngestClient } from '../../client/ingest-client.js';
import { UploadTooLargeError, type UploadReceiver } from '../../client/upload-receiver.js';
import type { ApiContext } from '../api-context.js';
import { ApiError, errorBodySchema, isRedisUnavailable } from '../errors.js';
import { principalOf } from '../auth/principal-of.js';
import { documentUploadServed } from '../schemas/served-media.js';

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

    app.post('/v1/documents', {
      schema: {
        operationId: 'uploadDocuments',
        served: documentUploadServed,
        summary: 'Upload documents for indexing',
        description:
          'multipart/form-data: one or more file parts (PDF, DOCX, HTML, Markdown, text; the type is detected from the content) and an optional `collection` field (default `default`). Answers 202 with the batch at once; follow it at `GET /v1/documents/batches/:batchId`. A file name identifies its document within the collection: uploading it again replaces the document when its bytes changed and does nothing when they did not. A document that cannot be parsed fails alone (its reason in the batch and in its record). Files stream to Redis as they arrive; a file over AGENTQ_INGEST_MAX_BYTES or files adding up to more than AGENTQ_UPLOAD_MAX_BYTES answer 413 at once, and nothing of that request is kept (no document changes).',
        tags: ['documents'],
        consumes: ['multipart/form-data'],
        response: { 202: ingestBatchSchema, ...errors },
      },
      handler: async (request, reply) => {
        const { tenant } = principalOf(request);
        if (!request.isMultipart())
          throw new ApiError(
            415,
            'UNSUPPORTED_MEDIA_TYPE',
            'send multipart/form-data with one or more file parts (and optionally a `collection` field)',
          );
        const receiver = await ingest.receiver(tenant, { maxBytes: context.config.uploadMaxBytes });
        let collection: string;
        try {
          collection = await receiveParts(request, receiver);
          if (!ID_PATTERN.test(collection))
            throw new ApiError(
              400,
              'INVALID_INPUT',
              `collection '${collection}' must be 1-128 characters of letters, digits, '_', '.' or '-'`,
            );
          if (receiver.received.length === 0)
            throw new ApiError(
              400,
              'INVALID_INPUT',
              'no file in the request: add one or more file parts to the multipart body',
            );
        } catch (error) {
          // Nothing of a refused request stays: its files were not handed in, and no document changed.
          await receiver.discard().catch(() => undefined);
          if (error instanceof UploadTooLargeError) {
            // The rest of the body is not read: close the connection rather than drain what may be gigabytes.
            reply.header('connection', 'close');
            throw new ApiError(413, 'PAYLOAD_TOO_LARGE', error.message, { details: error.details });
          }
          throw error;
        }
        try {
          const batch = await ingest.ingest(receiver.received, { collection, tenant });
          return reply.code(202).header('location', `/v1/documents/batches/${batch.batchId}`).send(batch);
        } catch (error) {
          // Files handed in were renamed away (DEL skips them); the others would only wait for their TTL.
          await receiver.discard().catch(() => undefined);
          throw error;
        }
      },
    });

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

/**
 * Streams the file parts of a multipart request into `receiver` (one file at a time, as they arrive) and
 * returns the `collection` field ('default' without one). A body the multipart parser cannot read is the
 * caller's (400); limits keep their status.
 */
async function receiveParts(request: FastifyRequest, receiver: UploadReceiver): Promise<string> {
  let collection = 'default';
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        await receiver.receive(part.filename || `${part.fieldname}-${receiver.received.length + 1}`, part.file);
      } else if (part.fieldname === 'collection') {
        collection = String(part.value);
      }
    }
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    // Ours (limits), the parser's limits (413) and Redis being away (503) keep their meaning.
    if (
      error instanceof ApiError ||
      AgentqError.isInstance(error) ||
      isRedisUnavailable(error) ||
      (status !== undefined && status < 500)
    )
      throw error;
    throw new ApiError(
      400,
      'INVALID_INPUT',
      `the multipart body cannot be read (${(error as Error).message}); send multipart/form-data with file parts and matching boundaries`,
    );
  }
  return collection;
}
