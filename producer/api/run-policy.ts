import type { FastifyRequest } from 'fastify';
import { checkRunPolicy, pinGuardrailsInState } from '../../shared/config/tenant-policy-check.js';
import { checkModelStatePatch } from '../../shared/store/forks/plan-fork.js';
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

/**
 * A fork's `set` held to the same policy as a new run's input: its state keys share the input's names
 * (`system`, `tools`, `guardrails`, `query`, and react-agent's `settings` with the model fields), and a
 * guardrail plan it sets keeps the tenant's pinned guardrails (a fork starts from state, not from intake).
 */
export function forkSetByPolicy(
  context: ApiContext,
  request: FastifyRequest,
  fork: { graph: string; set: Record<string, unknown> },
): Record<string, unknown> {
  for (const [key, value] of Object.entries(fork.set)) checkModelStatePatch(key, value);
  const { tenant, keyId } = principalOf(request);
  const rules = context.policy.rulesFor(tenant, keyId);
  const settings = fork.set.settings;
  const asInput = { ...fork.set, ...(typeof settings === 'object' && settings !== null ? settings : {}) };
  checkRunPolicy(rules, { tenant, graph: fork.graph, input: asInput });
  return pinGuardrailsInState(fork.set, rules);
}
