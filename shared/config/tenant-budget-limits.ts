import { z } from 'zod';
import { AgentqError } from '../contracts/errors.js';

/**
 * A tenant's budgets. A field left out is unlimited; 0 allows nothing. Cost is in US dollars (stored in
 * Redis as integer micro-dollars, so the Lua scripts add exactly).
 */
export interface TenantBudgetLimits {
  /** Input + output tokens per UTC day. */
  tokensPerDay?: number;
  /** Input + output tokens per UTC calendar month. */
  tokensPerMonth?: number;
  /** Model cost in USD per UTC day. */
  costUsdPerDay?: number;
  /** Model cost in USD per UTC calendar month. */
  costUsdPerMonth?: number;
  /**
   * Bytes the tenant may keep in Redis, all of its runs and documents (StorageBudget). Left out:
   * AGENTQ_TENANT_MAX_BYTES applies (unlike the fields above, a tenant's own limits never lift it).
   */
  storageBytes?: number;
}

const tokens = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
// Micro-dollars must stay exact integers in Lua's doubles: a billion dollars is far below 2^53 µ$.
const dollars = z.number().nonnegative().max(1e9);

export const tenantBudgetLimitsSchema = z.strictObject({
  tokensPerDay: tokens.optional(),
  tokensPerMonth: tokens.optional(),
  costUsdPerDay: dollars.optional(),
  costUsdPerMonth: dollars.optional(),
  storageBytes: tokens.optional(),
});

/** The Redis hash field of each limit (cost as integer micro-dollars). */
export const LIMIT_FIELDS = {
  tokensPerDay: 'tokensPerDay',
  tokensPerMonth: 'tokensPerMonth',
  costUsdPerDay: 'costMicrosPerDay',
  costUsdPerMonth: 'costMicrosPerMonth',
  storageBytes: 'storageBytes',
} as const satisfies Record<keyof TenantBudgetLimits, string>;

/** Validates an admin's limits; a bad one is INVALID_INPUT naming the field and what it accepts. */
export function parseTenantBudgetLimits(value: unknown): TenantBudgetLimits {
  const parsed = tenantBudgetLimitsSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.join('.') || '(body)';
  const expected =
    issue.code === 'unrecognized_keys'
      ? `unknown field; use ${Object.keys(LIMIT_FIELDS).join(', ')}`
      : field.startsWith('tokens')
        ? 'must be a whole number of tokens ≥ 0 (leave it out for no limit)'
        : field.startsWith('cost')
          ? 'must be a number of US dollars ≥ 0 (leave it out for no limit)'
          : field === 'storageBytes'
            ? 'must be a whole number of bytes ≥ 0 (leave it out for AGENTQ_TENANT_MAX_BYTES)'
            : issue.message;
  throw new AgentqError('INVALID_INPUT', `limits field ${field} ${expected}`, { details: { field } });
}

export const usdToMicros = (usd: number): number => Math.round(usd * 1e6);
export const microsToUsd = (micros: number): number => micros / 1e6;
