import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { INSPECTOR_COOKIE } from './auth/dashboard-sessions.js';
import { requirePageCaller } from './auth/page-caller.js';
import { servedSchemaTransform } from './openapi-served.js';

/**
 * The OpenAPI document (made from the routes' zod schemas, at /docs/json) and its UI at /docs. Registered
 * before the routes, which it then sees as they are added.
 */
export async function registerApiDocs(app: FastifyInstance, context: ApiContext): Promise<void> {
  const { apiKeys, config } = context;
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'agentq API',
        version: '1.0.0',
        description:
          'Enqueue agent runs, follow them (poll or Server-Sent Events), cancel, retry and resume them. Errors: {error: {code, message, details?}}.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'AGENTQ_API_KEYS entry: <key>:<tenant>:<role>' },
        },
      },
      security: [{ apiKey: [] }],
      // Relative: the API that served the document (a client generated from it sets its own base URL).
      servers: [{ url: '/', description: 'the agentq API that served this document' }],
    },
    transform: servedSchemaTransform(),
  });
  // The route map is for callers with a key (or a signed-in browser) unless AGENTQ_PUBLIC_DOCS=true.
  const docsGuard = requirePageCaller(
    { apiKeys, sessions: context.sessions, authThrottle: context.authThrottle, defaultTenant: config.tenant },
    {
      cookie: INSPECTOR_COOKIE,
      sendsToSignIn: (request) => (request.headers.accept ?? '').includes('text/html'),
      hint: 'the API docs need a key: send "Authorization: Bearer <API key>", sign in at /runs/login, or set AGENTQ_PUBLIC_DOCS=true',
    },
  );
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    ...(config.publicDocs ? {} : { uiHooks: { onRequest: docsGuard } }),
  });
}
