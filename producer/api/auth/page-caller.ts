import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, sendApiError } from '../errors.js';
import type { AuthThrottle } from '../limits/auth-throttle.js';
import type { ApiKeys, Principal } from './api-keys.js';
import { openPrincipal, throttledBearer } from './authenticate.js';
import { readCookie, type DashboardSessions } from './dashboard-sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The sign-in session's cookie token when the caller came by cookie (not by Bearer key or an open API). */
    pageSession: string | null;
  }
}

/** Who may see the pages: the keys, the sessions and the throttle of failed keys. */
interface PageAuth {
  apiKeys: ApiKeys;
  sessions: DashboardSessions;
  authThrottle: AuthThrottle;
  /** The open API's tenant. */
  defaultTenant: string;
}

/** A page's caller, and the session it came by (null for a Bearer key or an open API). */
interface PageCaller {
  principal: Principal;
  session: string | null;
}

/**
 * The caller of a page: its Bearer key (throttled like every key), else the sign-in session of the
 * `cookie`; null with neither (a page then sends the browser to its sign-in). An unknown or expired
 * session is no caller, not a failed authentication: cookies expire on their own.
 */
async function pageCaller(
  auth: PageAuth,
  request: FastifyRequest,
  cookie: string,
): Promise<PageCaller | null | ApiError> {
  if (auth.apiKeys.isOpen) return { principal: openPrincipal(auth.defaultTenant), session: null };
  const bearer = await throttledBearer(request, auth.apiKeys, auth.authThrottle);
  if (bearer !== null) return bearer instanceof ApiError ? bearer : { principal: bearer, session: null };
  const token = readCookie(request.headers.cookie, cookie);
  const keyId = token ? await auth.sessions.find(token) : null;
  const principal = keyId ? auth.apiKeys.byKeyId(keyId) : null;
  return principal && token ? { principal, session: token } : null;
}

/**
 * onRequest hook of pages: the caller (`pageCaller`) on `request.principal` and `request.pageSession`;
 * without one a browser's page view (`sendsToSignIn`) goes to `/runs/login`, anything else gets 401.
 */
export function requirePageCaller(
  auth: PageAuth,
  {
    cookie,
    sendsToSignIn,
    hint,
  }: { cookie: string; sendsToSignIn: (request: FastifyRequest) => boolean; hint: string },
) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    try {
      const found = await pageCaller(auth, request, cookie);
      if (found instanceof ApiError) return sendApiError(reply, found);
      if (found === null) {
        if (sendsToSignIn(request)) return reply.redirect(`/runs/login?next=${encodeURIComponent(request.url)}`, 303);
        return sendApiError(
          reply,
          new ApiError(401, 'UNAUTHORIZED', hint, { headers: { 'www-authenticate': 'Bearer realm="agentq"' } }),
        );
      }
      request.principal = found.principal;
      request.pageSession = found.session;
      return undefined;
    } catch (error) {
      return sendApiError(reply, error);
    }
  };
}
