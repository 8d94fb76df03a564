import type { HTTPMethods } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ApiError, errorBodySchema } from '../errors.js';

/** Routes of DESIGN §6 whose capability is not built yet, and what each will do. */
const NOT_BUILT: readonly { method: HTTPMethods; url: string; capability: string }[] = [
  { method: 'POST', url: '/v1/agent/chat', capability: 'agentic-RAG chat' },
  { method: 'POST', url: '/v1/documents', capability: 'document ingestion' },
  { method: 'GET', url: '/v1/documents', capability: 'document listing' },
  { method: 'DELETE', url: '/v1/documents', capability: 'document deletion' },
  { method: 'GET', url: '/v1/documents/:id', capability: 'document listing' },
  { method: 'DELETE', url: '/v1/documents/:id', capability: 'document deletion' },
  { method: 'POST', url: '/v1/batches', capability: 'batch document Q&A' },
  { method: 'GET', url: '/v1/batches/:id', capability: 'batch document Q&A' },
  { method: 'GET', url: '/v1/search', capability: 'search over ingested documents' },
  { method: 'POST', url: '/v1/search', capability: 'search over ingested documents' },
];

/**
 * 501 for each route above that no plugin registered (a capability built later registers its own
 * routes through createApi's `routes` option, and its stub steps aside).
 */
export function notImplementedRoutes(): FastifyPluginAsyncZod {
  return async (app) => {
    for (const { method, url, capability } of NOT_BUILT) {
      if (app.hasRoute({ method, url })) continue;
      app.route({
        method,
        url,
        schema: { summary: `${capability} (not built yet: 501)`, tags: ['not built yet'], response: { 501: errorBodySchema } },
        handler: async () => {
          throw new ApiError(501, 'NOT_IMPLEMENTED', `${method} ${url} is not built yet: ${capability} is not available in this agentq version; use POST /v1/runs with a graph meanwhile`);
        },
      });
    }
  };
}
