import type { FastifyRequest } from 'fastify';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { Principal } from './api-keys.js';

/** The caller a `/v1` route serves (set by the scope's auth hook, requireRole). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new AgentqError('INTERNAL', 'route reached without authentication (a scope lacks its auth hook)');
  return request.principal;
}
