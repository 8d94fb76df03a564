import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  collectionListSchema,
  collectionParamsSchema,
  collectionStatusSchema,
  searchBodySchema,
  searchQuerySchema,
  searchResultSchema,
} from '../schemas/document-schemas.js';
import { ingestClientFor } from '../../client/ingest-client-for.js';
import type { IngestClient } from '../../client/ingest-client.js';
import type { ApiContext } from '../api-context.js';
import { ApiError, errorBodySchema } from '../errors.js';
import { principalOf } from '../auth/principal-of.js';

interface SearchRoutesOptions {
  /** @default one IngestClient per API context (ingestClientFor), closed with the app */
  ingest?: IngestClient;
}

/**
 * `POST /v1/search {query, collection?, k?}` and `GET /v1/search?query=…&collection=…&k=…`: ranked chunks
 * of the caller's documents, with what a citation needs. `GET /v1/collections` and
 * `GET /v1/collections/:name`: what the caller's collections hold, and how many chunks still wait for
 * their vector.
 */
export function searchRoutes(
  context: Pick<ApiContext, 'config'>,
  options: SearchRoutesOptions = {},
): FastifyPluginAsyncZod {
  return async (app) => {
    const ingest = options.ingest ?? ingestClientFor(context);
    if (!options.ingest) app.addHook('onClose', async () => ingest.close());
    const search = (
      tenant: string,
      { query, collection, k }: { query: string; collection?: string | undefined; k: number },
    ) => ingest.search({ query, k, tenant, ...(collection === undefined ? {} : { collection }) });

    app.post('/v1/search', {
      schema: {
        operationId: 'search',
        summary: 'Search ingested documents',
        description:
          'Lexical (BM25) search over the chunks of your documents, in one collection or all of yours; best first. `score`: higher is better, comparable within one search only. Search syntax in `query` is ignored: any text is safe.',
        tags: ['documents'],
        body: searchBodySchema,
        response: { 200: searchResultSchema, '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      handler: async (request) => ({ hits: await search(principalOf(request).tenant, request.body) }),
    });

    app.get('/v1/search', {
      schema: {
        operationId: 'searchByQuery',
        summary: 'Search ingested documents (query string)',
        description: 'The same search as `POST /v1/search`, with `query`, `collection` and `k` in the query string.',
        tags: ['documents'],
        querystring: searchQuerySchema,
        response: { 200: searchResultSchema, '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      handler: async (request) => ({ hits: await search(principalOf(request).tenant, request.query) }),
    });

    app.get('/v1/collections', {
      schema: {
        operationId: 'listCollections',
        summary: 'List your collections',
        description:
          'Your collections, by name: chunks, vector length, and (with an embedder) how many chunks have their vector and how many are still waiting for it. Documents are searchable by their words as soon as they are indexed; vectors are added in the background.',
        tags: ['documents'],
        response: { 200: collectionListSchema, '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      handler: async (request) => ({ collections: await ingest.collections({ tenant: principalOf(request).tenant }) }),
    });

    app.get('/v1/collections/:name', {
      schema: {
        operationId: 'getCollection',
        summary: 'A collection and its vector progress',
        description:
          'One of your collections: chunks, vector length, and `vectors: {added, pending}` while an embedder adds vectors in the background (a hybrid search ranks chunks still without one by their words). 404 when you have no collection of that name.',
        tags: ['documents'],
        params: collectionParamsSchema,
        response: { 200: collectionStatusSchema, '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      handler: async (request) => {
        const status = await ingest.collection(request.params.name, { tenant: principalOf(request).tenant });
        if (!status) throw new ApiError(404, 'NOT_FOUND', `collection ${request.params.name} not found`);
        return status;
      },
    });
  };
}
