import { z } from 'zod';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';
import { DOCUMENT_STATUSES, DOCUMENT_TYPES, type DocumentRecord } from '../../../shared/retrieval/document-record.js';
import type { IngestProgress } from '../../../shared/retrieval/ingest-batch.js';
import type { CollectionStatus } from '../../../shared/retrieval/collection-status.js';
import { MAX_SEARCH_K, type SearchHit } from '../../../shared/retrieval/search-documents.js';
import type { IngestBatch } from '../../client/ingest-client.js';

const idMessage = (what: string) => `${what} must be 1-128 characters of letters, digits, '_', '.' or '-'`;
const errorShape = z.object({ code: z.string(), message: z.string() });

export const documentIdParamsSchema = z.object({ id: z.string().min(1).max(128) });
export const batchIdParamsSchema = z.object({ batchId: z.string().regex(ID_PATTERN, idMessage('the batch id')) });

export const listDocumentsQuerySchema = z
  .object({
    collection: z.string().regex(ID_PATTERN, idMessage('collection')).optional(),
    status: z.enum(DOCUMENT_STATUSES).optional(),
  })
  .strict();

export const documentRecordSchema: z.ZodType<DocumentRecord> = z
  .object({
    id: z.string(),
    tenant: z.string(),
    collection: z.string(),
    title: z.string(),
    path: z.string(),
    type: z.enum(DOCUMENT_TYPES).nullable(),
    status: z.enum(DOCUMENT_STATUSES),
    chunkCount: z.number(),
    contentHash: z.string().nullable(),
    pendingHash: z.string().nullable(),
    bytes: z.number(),
    pages: z.number().nullable(),
    error: errorShape.nullable(),
    batchId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    indexedAt: z.string().nullable(),
  })
  .loose()
  .describe('DocumentRecord');

export const documentListSchema = z.object({ documents: z.array(documentRecordSchema) });

export const ingestBatchSchema: z.ZodType<IngestBatch> = z
  .object({
    batchId: z.string(),
    tenant: z.string(),
    collection: z.string(),
    total: z.number(),
    documents: z.array(
      z
        .object({
          item: z.number(),
          docId: z.string().nullable(),
          path: z.string(),
          status: z.enum(['queued', 'unchanged', 'failed']),
          error: errorShape.optional(),
        })
        .loose(),
    ),
  })
  .loose()
  .describe('IngestBatch');

export const ingestProgressSchema: z.ZodType<IngestProgress> = z
  .object({
    batchId: z.string(),
    tenant: z.string(),
    collection: z.string(),
    total: z.number(),
    done: z.number(),
    failed: z.number(),
    finished: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    documents: z.array(
      z
        .object({
          item: z.number(),
          docId: z.string().nullable(),
          path: z.string(),
          status: z.enum(['indexed', 'unchanged', 'failed', 'superseded', 'deleted']),
          type: z.enum(DOCUMENT_TYPES).optional(),
          title: z.string().optional(),
          chunks: z.number().optional(),
          error: errorShape.optional(),
        })
        .loose(),
    ),
  })
  .loose()
  .describe('IngestProgress');

export const searchBodySchema = z
  .object({
    query: z.string().trim().min(1, 'query must be non-empty text').max(4000),
    collection: z.string().regex(ID_PATTERN, idMessage('collection')).optional(),
    k: z.number().int().min(1).max(MAX_SEARCH_K).default(5),
  })
  .strict()
  .describe('SearchRequest');

/** `GET /v1/search?query=…&collection=…&k=…`: the same search as the POST body, for links and curl. */
export const searchQuerySchema = z
  .object({
    query: z.string().trim().min(1, 'query must be non-empty text').max(4000),
    collection: z.string().regex(ID_PATTERN, idMessage('collection')).optional(),
    k: z.coerce.number().int().min(1).max(MAX_SEARCH_K).default(5),
  })
  .strict();

/** `DELETE /v1/documents?collection=…`: a collection is required, so no request empties a tenant by accident. */
export const deleteDocumentsQuerySchema = z
  .object({
    collection: z
      .string({ error: 'collection is required: name the collection whose documents to delete (?collection=…)' })
      .regex(ID_PATTERN, idMessage('collection')),
  })
  .strict();

export const deleteDocumentsResultSchema = z.object({
  collection: z.string(),
  deleted: z.number().int().describe('documents deleted, with their chunks'),
});

export const searchResultSchema: z.ZodType<{ hits: SearchHit[] }> = z.object({
  hits: z.array(
    z
      .object({
        chunkId: z.string(),
        docId: z.string(),
        title: z.string(),
        path: z.string(),
        page: z.number().nullable(),
        score: z.number().describe('higher is better; comparable within one search only'),
        relevance: z
          .number()
          .min(0)
          .max(1)
          .describe(
            'relevance in 0-1, comparable across searches: cosine similarity where a dense model ran, else calibrated BM25 (docs/reference/rag-output.md)',
          ),
        text: z.string(),
        headingPath: z.array(z.string()),
        collection: z.string(),
      })
      .loose(),
  ),
});

export const collectionParamsSchema = z.object({ name: z.string().regex(ID_PATTERN, idMessage('collection')) });

export const collectionStatusSchema: z.ZodType<CollectionStatus> = z.object({
  name: z.string(),
  chunks: z.number().describe('chunks in the collection, each searchable by its words as soon as it is written'),
  dimensions: z.number().nullable().describe('length of its vectors; null while it has none'),
  vectors: z
    .object({
      added: z.number().describe('chunks that have their vector'),
      pending: z.number().describe('chunks whose vector is still being added in the background'),
    })
    .nullable()
    .describe('null when no embedder is configured (lexical search) or the store takes vectors only at ingest'),
});

export const collectionListSchema = z.object({ collections: z.array(collectionStatusSchema) });
