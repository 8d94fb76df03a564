import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ApiContext } from '../api-context.js';
import { registerRunActionRoutes } from './run-action-routes.js';
import { registerRunBulkCancelRoute } from './run-bulk-cancel-route.js';
import { registerRunCollectionRoutes } from './run-collection-routes.js';
import { registerRunReadRoutes } from './run-read-routes.js';

/** The run routes of docs/reference/http-api.md, scoped to the caller's tenant. */
export function runsRoutes(context: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    registerRunCollectionRoutes(app, context);
    registerRunReadRoutes(app, context);
    registerRunActionRoutes(app, context);
    registerRunBulkCancelRoute(app, context);
  };
}
