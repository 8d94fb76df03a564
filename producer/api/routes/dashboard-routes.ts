import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { STEP_QUEUE } from '../../../shared/contracts/queues.js';
import { shardOfQueuePrefix, stepQueueBoardName } from '../../../shared/contracts/shards.js';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiContext } from '../api-context.js';
import type { Principal } from '../auth/api-keys.js';
import { bearerPrincipal, checkRole, openPrincipal } from '../auth/authenticate.js';
import { readCookie, SESSION_COOKIE } from '../auth/dashboard-sessions.js';
import { ApiError, sendApiError } from '../errors.js';
import { requireRedis } from '../redis-ready.js';
import { loginPage } from './login-page.js';
import { INSPECTOR_COOKIE } from './inspector-routes.js';

export const DASHBOARD_PATH = '/admin/queues';
const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="agentq dashboard", charset="UTF-8"' };

/** Only paths of the dashboard itself: anything else (`//evil.example`, `https://…`) goes to the dashboard. */
function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/admin\/queues(?:[/?#][^\s\\]*)?$/.test(next) && !next.startsWith('//')
    ? next
    : DASHBOARD_PATH;
}

/**
 * Bull Board at /admin/queues, for the admin role. A browser signs in at /admin/login with the admin key
 * and gets an HttpOnly session cookie; scripts send Basic auth (any user, the key as password) or a
 * Bearer header. Read-only unless AGENTQ_DASHBOARD_WRITE=true, enforced here as well as in the UI.
 */
export function dashboardRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { apiKeys, config, sessions, queues } = context;

  /** Who the request is from: Bearer, Basic or session cookie; null with none of them. */
  const principalOf = async (request: FastifyRequest): Promise<Principal | null | ApiError> => {
    if (apiKeys.isOpen) return openPrincipal(config.tenant);
    const header = request.headers.authorization ?? '';
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const password = decoded.slice(decoded.indexOf(':') + 1);
      return (
        apiKeys.authenticate(password) ??
        new ApiError(401, 'UNAUTHORIZED', 'the API key (Basic auth password) is not valid', {
          headers: BASIC_CHALLENGE,
        })
      );
    }
    if (header !== '') return bearerPrincipal(request, apiKeys);
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (!token) return null;
    const keyId = await sessions.find(token);
    return keyId ? apiKeys.byKeyId(keyId) : null;
  };

  const guard = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    try {
      // Bull Board's queue reads wait for a connection instead of failing: answer 503 now instead.
      await requireRedis(context.redis);
      const principal = await principalOf(request);
      if (principal instanceof ApiError) return sendApiError(reply, principal);
      if (principal === null) {
        if (
          (request.method === 'GET' || request.method === 'HEAD') &&
          (request.headers.accept ?? '').includes('text/html')
        ) {
          return reply.redirect(`/admin/login?next=${encodeURIComponent(request.url)}`, 303);
        }
        return sendApiError(
          reply,
          new ApiError(
            401,
            'UNAUTHORIZED',
            'sign in at /admin/login, or send Basic auth with the admin key as password',
            { headers: BASIC_CHALLENGE },
          ),
        );
      }
      const refused = checkRole(principal, 'admin');
      if (refused) return sendApiError(reply, refused);
      if (!config.dashboardWrite && request.method !== 'GET' && request.method !== 'HEAD') {
        return sendApiError(
          reply,
          new ApiError(
            403,
            'FORBIDDEN',
            'the dashboard is read-only; set AGENTQ_DASHBOARD_WRITE=true to retry, remove or promote jobs from it',
          ),
        );
      }
      request.principal = principal;
      return undefined;
    } catch (error) {
      return sendApiError(reply, error);
    }
  };

  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    // With several shards, each shard's step queue gets its own name in Bull Board (`s2-agentq-steps`).
    queues: queues.map((queue) => {
      const shard = queue.name === STEP_QUEUE ? shardOfQueuePrefix(queue.opts.prefix ?? '', config.shards) : undefined;
      const name = shard === undefined ? queue.name : stepQueueBoardName(shard, config.shards, queue.name);
      return new BullMQAdapter(queue, {
        readOnlyMode: !config.dashboardWrite,
        allowRetries: config.dashboardWrite,
        ...(name === queue.name ? {} : { prefix: name.slice(0, -queue.name.length) }),
      });
    }),
    serverAdapter,
    options: {
      uiConfig: { boardTitle: 'agentq', miscLinks: apiKeys.isOpen ? [] : [{ text: 'Sign out', url: '/admin/logout' }] },
    },
  });

  return async (app) => {
    await app.register(async (scope) => {
      scope.addHook('onRequest', guard);
      await scope.register(serverAdapter.registerPlugin(), { prefix: DASHBOARD_PATH });
    });

    app.get('/admin', { schema: { hide: true } }, async (_request, reply) => reply.redirect(DASHBOARD_PATH, 303));

    await app.register(async (plain) => {
      const scope = plain.withTypeProvider<ZodTypeProvider>();
      // The sign-in form posts urlencoded; only these routes accept it.
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      const html = (reply: FastifyReply, status: number, body: string) =>
        reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);

      scope.get(
        '/admin/login',
        { schema: { hide: true, querystring: z.object({ next: z.string().optional() }).loose() } },
        async (request, reply) => {
          if (apiKeys.isOpen) return reply.redirect(DASHBOARD_PATH, 303);
          return html(reply, 200, loginPage({ next: safeNext(request.query.next) }));
        },
      );

      scope.post(
        '/admin/login',
        {
          schema: {
            hide: true,
            body: z.object({ key: z.string().max(4096).default(''), next: z.string().max(2048).optional() }).loose(),
          },
        },
        async (request, reply) => {
          const next = safeNext(request.body.next);
          const principal = apiKeys.authenticate(request.body.key);
          if (!principal) return html(reply, 401, loginPage({ next, problem: 'That key is not valid.' }));
          if (principal.role !== 'admin') {
            return html(
              reply,
              403,
              loginPage({
                next,
                problem: `That key has the ${principal.role} role; the dashboard needs an admin key.`,
              }),
            );
          }
          const token = await sessions.create(principal.keyId);
          const secure = request.protocol === 'https' ? '; Secure' : '';
          // The same session also signs the browser in to the run inspector (/runs, /batches), whose cookie is on /.
          reply.header('set-cookie', [
            `${SESSION_COOKIE}=${token}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${sessions.ttlSeconds}${secure}`,
            `${INSPECTOR_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${sessions.ttlSeconds}${secure}`,
          ]);
          return reply.redirect(next, 303);
        },
      );

      scope.route({
        method: ['GET', 'POST'],
        url: '/admin/logout',
        schema: { hide: true },
        handler: async (request, reply) => {
          const token = readCookie(request.headers.cookie, SESSION_COOKIE);
          if (token) await sessions.delete(token);
          reply.header('set-cookie', [
            `${SESSION_COOKIE}=; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=0`,
            `${INSPECTOR_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`,
          ]);
          return reply.redirect('/admin/login', 303);
        },
      });
    });
  };
}
