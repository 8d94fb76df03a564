import type { FastifyRequest } from 'fastify';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';
import { ingestBatchSchema } from '../schemas/document-schemas.js';
import type { IngestClient } from '../../client/ingest-client.js';
import { UploadTooLargeError, type UploadReceiver } from '../../client/upload-receiver.js';
import type { ApiContext } from '../api-context.js';
import { ApiError, errorBodySchema, isRedisUnavailable } from '../errors.js';
import { principalOf } from '../auth/principal-of.js';
import { documentUploadServed } from '../schemas/served-media.js';
import type { RouteScope } from './route-scope.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/**
 * `POST /v1/documents`: the files of a multipart upload stream into Redis as they arrive, then go to
 * ingestion as one batch; a refused upload leaves nothing behind.
 */
export function registerDocumentUploadRoute(
  app: RouteScope,
  { ingest, config }: { ingest: IngestClient; config: ApiContext['config'] },
): void {
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
      const receiver = await ingest.receiver(tenant, { maxBytes: config.uploadMaxBytes });
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
