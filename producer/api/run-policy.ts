import type { FastifyRequest } from 'fastify';
import { checkRunPolicy } from '../../shared/config/tenant-policy-check.js';
import type { ApiContext } from './api-context.js';
import { principalOf } from './auth/principal-of.js';

/**
 * Refuses with 403 POLICY_DENIED a run the caller's tenant (or key) may not ask for, before anything is
 * created or charged: every door that creates runs from a request (runs, chat, batches, schedules) asks here.
 */
export function admitByPolicy(
  context: ApiContext,
  request: FastifyRequest,
  run: { graph: string; input: unknown },
): void {
  const { tenant, keyId } = principalOf(request);
  checkRunPolicy(context.policy.rulesFor(tenant, keyId), { tenant, ...run });
}
