import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AgentqError } from '../../../shared/errors.js';
import { searchBodySchema, searchResultSchema } from '../../ingest/document-schemas.js';
import { ingestClientFor } from '../../ingest/ingest-client-for.js';
import type { IngestClient } from '../../ingest/ingest-client.js';
import type { ApiContext } from '../api-context.js';
import type { Principal } from '../auth/api-keys.js';
import { errorBodySchema } from '../errors.js';

function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AgentqError('INTERNAL', 'route reached without authentication (a scope lacks its auth hook)');
  return request.principal;
}

export interface SearchRoutesOptions {
  /** @default one IngestClient per API context (ingestClientFor), closed with the app */
  ingest?: IngestClient;
}

/** `POST /v1/search {query, collection?, k?}`: ranked chunks of the caller's documents, with what a citation needs. */
export function searchRoutes(context: Pick<ApiContext, 'config'>, options: SearchRoutesOptions = {}): FastifyPluginAsyncZod {
  return async (app) => {
    const ingest = options.ingest ?? ingestClientFor(context);
    if (!options.ingest) app.addHook('onClose', async () => ingest.close());

    app.post('/v1/search', {
      schema: {
        summary: 'Search ingested documents',
        description:
          'Lexical (BM25) search over the chunks of your documents, in one collection or all of yours; best first. `score`: higher is better, comparable within one search only. Search syntax in `query` is ignored: any text is safe.',
        tags: ['documents'],
        body: searchBodySchema,
        response: { 200: searchResultSchema, '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      handler: async (request) => {
        const { query, collection, k } = request.body;
        const hits = await ingest.search({ query, k, tenant: principalOf(request).tenant, ...(collection === undefined ? {} : { collection }) });
        return { hits };
      },
    });
  };
}
