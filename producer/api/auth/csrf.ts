import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, sendApiError } from '../errors.js';

/** The hidden field of the pages' forms that carries the session's CSRF token. */
export const CSRF_FIELD = '_csrf';

/**
 * The CSRF token of a sign-in session: an HMAC keyed by the session's secret cookie token, so it needs
 * no storage, ends with the session, and cannot be made by a page that cannot read the HttpOnly cookie.
 */
export function csrfToken(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('agentq form v1').digest('base64url');
}

/** True when `presented` is the CSRF token of `sessionToken` (compared in constant time). */
function csrfTokenMatches(sessionToken: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfToken(sessionToken));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** 403 for a form posted with a session cookie but without its CSRF token, else null. */
export function csrfRefusal(sessionToken: string, body: unknown): ApiError | null {
  const presented = (body as Record<string, unknown> | null | undefined)?.[CSRF_FIELD];
  return csrfTokenMatches(sessionToken, presented)
    ? null
    : new ApiError(
        403,
        'FORBIDDEN',
        `the form's ${CSRF_FIELD} token is missing or not this session's; reload the page and submit its form again`,
      );
}

/**
 * A state-changing request a page of another origin made the browser send, refused. The browser's own
 * word (Sec-Fetch-Site) where it gives it, else its Origin against this API's origin (scheme, host and
 * port: another port of the same host is another origin, though the same site). A request with neither
 * header is not a browser's form (browsers send Origin on every POST), so a script's Bearer call passes.
 */
export function crossOriginRefusal(request: FastifyRequest): ApiError | null {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') {
    return site === 'same-origin'
      ? null
      : new ApiError(
          403,
          'FORBIDDEN',
          `a form of another origin may not post here (Sec-Fetch-Site: ${site}); use the page this API serves`,
        );
  }
  const origin = request.headers.origin;
  if (origin === undefined) return null;
  const own = `${request.protocol}://${request.host}`;
  return origin === own
    ? null
    : new ApiError(
        403,
        'FORBIDDEN',
        `a form of another origin may not post here (Origin ${origin.slice(0, 200)}, this API is ${own}); use the page this API serves, or set AGENTQ_TRUST_PROXY behind a proxy`,
      );
}

/** onRequest hook: `crossOriginRefusal` for every request but GET and HEAD. */
export async function requireSameOrigin(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
  if (request.method === 'GET' || request.method === 'HEAD') return;
  const refused = crossOriginRefusal(request);
  if (refused) return sendApiError(reply, refused);
}
