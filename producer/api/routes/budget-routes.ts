import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TenantBudget } from '../../../shared/operations/limits/tenant-budget.js';
import { tenantBudgetLimitsSchema } from '../../../shared/config/tenant-budget-limits.js';
import type { ApiContext } from '../api-context.js';
import { checkRole } from '../auth/authenticate.js';
import { errorBodySchema } from '../errors.js';
import { principalOf } from '../auth/principal-of.js';

const limitsAnswer = z.object({
  tenant: z.string(),
  limits: tenantBudgetLimitsSchema,
  source: z.enum(['tenant', 'defaults']),
});
const totals = z.object({ tokens: z.number(), costUsd: z.number() });
const period = totals.extend({
  period: z.string(),
  calls: z.number(),
  byGraph: z.record(z.string(), totals),
  byModel: z.record(z.string(), totals),
});
const tenantParam = z.object({
  tenant: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_.-]+$/, 'a tenant id: letters, digits, _ . -'),
});

interface BudgetRoutesOptions {
  /** @default a TenantBudget on the API's Redis connection, AGENTQ_TENANT_BUDGET_DEFAULTS as defaults */
  budget?: TenantBudget;
}

/**
 * Tenant budgets: an admin sets and reads any tenant's token and cost limits per UTC day and month
 * (`/v1/admin/tenants/:tenant/limits`, admin role: the operator of the deployment, as in the inspector);
 * `GET /v1/usage` shows the caller's own tenant its limits and spend per day, graph and model — never
 * another tenant's.
 */
export function budgetRoutes(
  context: Pick<ApiContext, 'redis' | 'store' | 'config'>,
  options: BudgetRoutesOptions = {},
): FastifyPluginAsyncZod {
  return async (app) => {
    const budget =
      options.budget ??
      new TenantBudget(context.redis, context.store.keys, { defaults: context.config.tenantBudgetDefaults });
    const adminOnly = async (request: FastifyRequest) => {
      const refused = checkRole(principalOf(request), 'admin');
      if (refused) throw refused;
    };

    app.get('/v1/admin/tenants/:tenant/limits', {
      schema: {
        operationId: 'getTenantLimits',
        summary: "Read a tenant's budgets (admin)",
        tags: ['admin'],
        params: tenantParam,
        response: { 200: limitsAnswer, '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      onRequest: adminOnly,
      handler: async (request) => ({
        tenant: request.params.tenant,
        ...(await budget.getLimits(request.params.tenant)),
      }),
    });

    app.put('/v1/admin/tenants/:tenant/limits', {
      schema: {
        operationId: 'setTenantLimits',
        served: { body: { 'application/json': tenantBudgetLimitsSchema } },
        summary: "Set a tenant's budgets (admin)",
        description:
          "Replaces the tenant's limits: `tokensPerDay`, `tokensPerMonth`, `costUsdPerDay`, `costUsdPerMonth` (UTC day and month). A field left out is unlimited; 0 allows nothing. A run whose next model call would pass a limit fails before the call with TENANT_BUDGET_EXCEEDED. `storageBytes`: bytes the tenant may keep in Redis, every byte of its runs and documents (left out: AGENTQ_TENANT_MAX_BYTES, 1 GiB by default); a run that would start past it is refused with STORAGE_BUDGET_EXCEEDED (429, or 413 when it alone is larger); a run already started finishes and is charged in full.",
        tags: ['admin'],
        params: tenantParam,
        // Validated by parseTenantBudgetLimits so the 400 names the field and what it accepts.
        body: z.unknown(),
        response: { 200: limitsAnswer, '4xx': errorBodySchema, '5xx': errorBodySchema },
      },
      onRequest: adminOnly,
      handler: async (request) => {
        const limits = await budget.setLimits(request.params.tenant, request.body ?? {});
        return { tenant: request.params.tenant, limits, source: 'tenant' as const };
      },
    });

    app.get('/v1/usage', {
      schema: {
        operationId: 'getUsage',
        summary: "Your tenant's budgets and spend",
        description:
          'Tokens, cost and model calls per UTC day (newest first, `days` of them) and this month, each split per graph and per model.',
        tags: ['usage'],
        querystring: z.object({ days: z.coerce.number().int().min(1).max(35).default(7) }),
        response: {
          200: z.object({ tenant: z.string(), limits: tenantBudgetLimitsSchema, days: z.array(period), month: period }),
          '4xx': errorBodySchema,
          '5xx': errorBodySchema,
        },
      },
      handler: async (request) => {
        const { tenant } = principalOf(request);
        const [{ limits }, usage] = await Promise.all([
          budget.getLimits(tenant),
          budget.usage(tenant, { days: request.query.days }),
        ]);
        return { tenant, limits, ...usage };
      },
    });
  };
}
