import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { STEP_QUEUE } from '../../../shared/contracts/queues.js';
import { shardOfQueuePrefix, stepQueueBoardName } from '../../../shared/contracts/shards.js';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ApiContext } from '../api-context.js';
import type { Principal } from '../auth/api-keys.js';
import { bearerPrincipal, checkRole, openPrincipal, throttled } from '../auth/authenticate.js';
import { crossOriginRefusal } from '../auth/csrf.js';
import { readCookie, SESSION_COOKIE } from '../auth/dashboard-sessions.js';
import { ApiError, sendApiError } from '../errors.js';
import { requireRedis } from '../redis-ready.js';

const DASHBOARD_PATH = '/admin/queues';
const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="agentq dashboard", charset="UTF-8"' };

/**
 * Bull Board at /admin/queues, for the admin role. A browser signs in at /admin/login with the admin key
 * and gets an HttpOnly session cookie; scripts send Basic auth (any user, the key as password) or a
 * Bearer header. Read-only unless AGENTQ_DASHBOARD_WRITE=true, enforced here as well as in the UI.
 */
export function dashboardRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { apiKeys, config, sessions, queues, authThrottle } = context;

  /** Who the request is from: Bearer, Basic or session cookie; null with none of them. Keys are throttled. */
  const principalOf = async (request: FastifyRequest): Promise<Principal | null | ApiError> => {
    if (apiKeys.isOpen) return openPrincipal(config.tenant);
    const header = request.headers.authorization ?? '';
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const password = decoded.slice(decoded.indexOf(':') + 1);
      return throttled(
        authThrottle,
        request,
        () =>
          apiKeys.authenticate(password) ??
          new ApiError(401, 'UNAUTHORIZED', 'the API key (Basic auth password) is not valid', {
            headers: BASIC_CHALLENGE,
          }),
      );
    }
    if (header !== '') return throttled(authThrottle, request, () => bearerPrincipal(request, apiKeys)!);
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
      const writes = request.method !== 'GET' && request.method !== 'HEAD';
      if (!config.dashboardWrite && writes) {
        return sendApiError(
          reply,
          new ApiError(
            403,
            'FORBIDDEN',
            'the dashboard is read-only; set AGENTQ_DASHBOARD_WRITE=true to retry, remove or promote jobs from it',
          ),
        );
      }
      // A browser's Basic credentials and session cookie go along with any page's request: writes from
      // another origin (another port of this host included) are refused.
      const foreign = writes ? crossOriginRefusal(request) : null;
      if (foreign) return sendApiError(reply, foreign);
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
  };
}
