import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ApiContext } from '../api-context.js';
import { csrfRefusal, requireSameOrigin } from '../auth/csrf.js';
import { INSPECTOR_COOKIE } from '../auth/dashboard-sessions.js';
import { requirePageCaller } from '../auth/page-caller.js';
import { sendApiError } from '../errors.js';
import { PAGE_ASSETS, PAGE_STYLE, RUN_LIVE_SCRIPT } from '../inspector/page-assets.js';
import { limitRate } from '../limits/limit-rate.js';
import { registerBatchPages } from './inspector-batch-pages.js';
import { registerGraphPages } from './inspector-graph-pages.js';
import { inspectorHelpers } from './inspector-helpers.js';
import { registerRunForms } from './inspector-run-forms.js';
import { registerRunListPage } from './inspector-run-list.js';
import { registerRunPages } from './inspector-run-pages.js';

/**
 * The run inspector: server-rendered pages at /runs, /runs/:id and /batches/:id, with the
 * API's own script for live updates. A caller is its Bearer key or the session from /runs/login or
 * /admin/login (sign-in-routes.ts); a tenant sees its own runs, an admin every tenant's; a foreign run
 * is a 404 like a missing one. The pages count against the caller's rate limit like /v1; a form that
 * changes a run must come from this API's origin and, from a session, carry the session's CSRF token.
 */
export function inspectorRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { apiKeys, config, sessions } = context;
  const auth = { apiKeys, sessions, authThrottle: context.authThrottle, defaultTenant: config.tenant };

  const guard = requirePageCaller(auth, {
    cookie: INSPECTOR_COOKIE,
    sendsToSignIn: (request) => request.method === 'GET' && !request.url.includes('/events'),
    hint: 'sign in at /runs/login, or send "Authorization: Bearer <API key>"',
  });

  /** preHandler of the forms (the body is parsed by then): a session's post carries its CSRF token. */
  const checkCsrf = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const refused = request.pageSession ? csrfRefusal(request.pageSession, request.body) : null;
    return refused ? sendApiError(reply, refused) : undefined;
  };
  const helpers = inspectorHelpers(context);

  return async (app) => {
    await app.register(async (plain) => {
      const scope = plain.withTypeProvider<ZodTypeProvider>();
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      // The pages' stylesheet and script: public (no secrets), so the sign-in page has its style too.
      for (const [asset, text] of [
        [PAGE_ASSETS.style, PAGE_STYLE],
        [PAGE_ASSETS.runLive, RUN_LIVE_SCRIPT],
      ] as const) {
        scope.get(asset.path, { schema: { hide: true } }, async (_request, reply) =>
          reply.type(asset.type).header('cache-control', 'public, max-age=300').send(text),
        );
      }

      await scope.register(async (guarded) => {
        const pages = guarded.withTypeProvider<ZodTypeProvider>();
        pages.addHook('onRequest', requireSameOrigin);
        pages.addHook('onRequest', guard);
        pages.addHook('onRequest', limitRate(context.rateLimiter, context.redis));
        pages.addHook('preHandler', async (request, reply) =>
          request.method === 'POST' ? checkCsrf(request, reply) : undefined,
        );
        registerRunListPage(pages, helpers);
        registerRunPages(pages, helpers);
        registerRunForms(pages, helpers);
        registerBatchPages(pages, helpers);
        registerGraphPages(pages, helpers);
      });
    });
  };
}
