import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, sendApiError } from '../errors.js';
import { attemptOf, type AuthThrottle } from '../limits/auth-throttle.js';
import type { ApiKeys, Principal, Role } from './api-keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by the authentication hook of the route's scope. */
    principal: Principal | null;
  }
}

/** Stand-in caller while no key is configured (the API then listens on loopback only). */
export function openPrincipal(tenant: string): Principal {
  return { tenant, role: 'admin', keyId: 'open' };
}

/** The principal of a request's `Authorization: Bearer <key>`, null without the header, or an ApiError. */
export function bearerPrincipal(request: FastifyRequest, apiKeys: ApiKeys): Principal | null | ApiError {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match)
    return new ApiError(401, 'UNAUTHORIZED', 'the Authorization header must be "Bearer <API key>"', {
      headers: { 'www-authenticate': 'Bearer realm="agentq"' },
    });
  return (
    apiKeys.authenticate(match[1]!) ??
    new ApiError(401, 'UNAUTHORIZED', 'the API key is not valid; check it or ask for a new one', {
      headers: { 'www-authenticate': 'Bearer realm="agentq", error="invalid_token"' },
    })
  );
}

/**
 * A presented credential checked under the failed-authentication throttle: a correct one is accepted
 * whatever the counts say (the owner is never locked out by someone else's guessing), and every 401 is
 * counted against the client's address, the connection and the credential (the 401, or 429 once past a
 * limit). Callers without a credential do not come here: they guess nothing.
 */
export async function throttled<T>(
  throttle: AuthThrottle,
  request: FastifyRequest,
  check: () => T | ApiError,
): Promise<T | ApiError> {
  const result = check();
  return result instanceof ApiError && result.statusCode === 401
    ? throttle.failed(attemptOf(request, request.headers.authorization ?? ''), result)
    : result;
}

/** `bearerPrincipal` under the failed-authentication throttle (no Redis round trip without the header). */
export async function throttledBearer(
  request: FastifyRequest,
  apiKeys: ApiKeys,
  throttle: AuthThrottle,
): Promise<Principal | null | ApiError> {
  if (request.headers.authorization === undefined) return null;
  return throttled(throttle, request, () => bearerPrincipal(request, apiKeys));
}

/** 403 unless `principal` has `role` (admin may do everything a producer may). */
export function checkRole(principal: Principal, role: Role): ApiError | null {
  if (role === 'admin' && principal.role !== 'admin') {
    return new ApiError(
      403,
      'FORBIDDEN',
      `this route needs a key with the admin role; yours has the ${principal.role} role`,
    );
  }
  return null;
}

/** onRequest hook: Bearer key of at least `role` (401 without one, 403 with a weaker one, 429 after too many wrong ones). */
export function requireRole(
  { apiKeys, defaultTenant, throttle }: { apiKeys: ApiKeys; defaultTenant: string; throttle: AuthThrottle },
  role: Role,
) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (apiKeys.isOpen) {
      request.principal = openPrincipal(defaultTenant);
      return undefined;
    }
    let principal: Principal | null | ApiError;
    try {
      principal = await throttledBearer(request, apiKeys, throttle);
    } catch (error) {
      return sendApiError(reply, error);
    }
    if (principal === null) {
      return sendApiError(
        reply,
        new ApiError(401, 'UNAUTHORIZED', 'missing API key: send "Authorization: Bearer <API key>"', {
          headers: { 'www-authenticate': 'Bearer realm="agentq"' },
        }),
      );
    }
    if (principal instanceof ApiError) return sendApiError(reply, principal);
    const refused = checkRole(principal, role);
    if (refused) return sendApiError(reply, refused);
    request.principal = principal;
    return undefined;
  };
}
