import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { Keys } from '../../shared/store/keys.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { API_KEYS_ENV, bearer, isErrorShape, json, KEYS } from '../helpers/api-test-env.js';
import { testConfig } from '../helpers/test-env.js';

describe('HTTP API: tenant budgets and usage', () => {
  let app: ApiInstance;
  let redis: Redis;
  let budget: TenantBudget;

  beforeAll(async () => {
    const config = testConfig({ AGENTQ_API_KEYS: API_KEYS_ENV });
    app = await createApi({ config, logger: createLogger(config.logLevel) });
    redis = new Redis(config.redisUrl!);
    budget = new TenantBudget(redis, new Keys(config.keyPrefix));
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
  });

  const as = (key: string, method: 'GET' | 'PUT', url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: bearer(key),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  it("an admin sets a tenant's limits; the worker-side budget then refuses what does not fit", async () => {
    const put = await as(KEYS.acmeAdmin, 'PUT', '/v1/admin/tenants/globex/limits', {
      tokensPerDay: 500,
      costUsdPerMonth: 12.5,
    });
    expect(put.statusCode).toBe(200);
    expect(json(put)).toEqual({
      tenant: 'globex',
      limits: { tokensPerDay: 500, costUsdPerMonth: 12.5 },
      source: 'tenant',
    });
    const get = await as(KEYS.acmeAdmin, 'GET', '/v1/admin/tenants/globex/limits');
    expect(json(get)).toEqual({
      tenant: 'globex',
      limits: { tokensPerDay: 500, costUsdPerMonth: 12.5 },
      source: 'tenant',
    });
    await expect(budget.reserve('globex', { callId: 'c1', tokens: 501, costUsd: 0 })).rejects.toMatchObject({
      code: 'TENANT_BUDGET_EXCEEDED',
    });
  });

  it("a producer can neither read nor change limits, its own tenant's or another's", async () => {
    for (const [method, url] of [
      ['GET', '/v1/admin/tenants/globex/limits'],
      ['PUT', '/v1/admin/tenants/globex/limits'],
      ['PUT', '/v1/admin/tenants/acme/limits'],
    ] as const) {
      const response = await as(
        KEYS.globexProducer,
        method,
        url,
        method === 'PUT' ? { tokensPerDay: 1_000_000 } : undefined,
      );
      expect(response.statusCode).toBe(403);
      expect(json<{ error: { code: string } }>(response).error.code).toBe('FORBIDDEN');
    }
    expect((await budget.getLimits('globex')).limits).toEqual({ tokensPerDay: 500, costUsdPerMonth: 12.5 });
  });

  it('a negative budget or an unknown field is a 400 naming the field', async () => {
    const negative = await as(KEYS.acmeAdmin, 'PUT', '/v1/admin/tenants/acme/limits', { costUsdPerDay: -3 });
    expect(negative.statusCode).toBe(400);
    expect(isErrorShape(json(negative))).toBe(true);
    expect(json(negative)).toMatchObject({ error: { code: 'INVALID_INPUT', details: { field: 'costUsdPerDay' } } });
    const unknown = await as(KEYS.acmeAdmin, 'PUT', '/v1/admin/tenants/acme/limits', { tokensPerHour: 3 });
    expect(json(unknown)).toMatchObject({ error: { code: 'INVALID_INPUT', details: { field: 'tokensPerHour' } } });
    expect(unknown.statusCode).toBe(400);
  });

  it('GET /v1/usage shows the caller its own spend per day, graph and model, and nothing of other tenants', async () => {
    const now = Date.now();
    await budget.settle(
      'acme',
      undefined,
      { callId: 'a1', tokens: 40, costUsd: 0.002, graph: 'qa', model: 'gpt-a' },
      now,
    );
    await budget.settle(
      'globex',
      undefined,
      { callId: 'g1', tokens: 7000, costUsd: 3, graph: 'secret-graph', model: 'gpt-b' },
      now,
    );
    const mine = json<{
      tenant: string;
      days: { tokens: number; byGraph: Record<string, unknown> }[];
      month: { tokens: number };
    }>(await as(KEYS.acmeProducer, 'GET', '/v1/usage?days=2'));
    expect(mine.tenant).toBe('acme');
    expect(mine.days).toHaveLength(2);
    expect(mine.days[0]).toMatchObject({
      tokens: 40,
      costUsd: 0.002,
      calls: 1,
      byGraph: { qa: { tokens: 40 } },
      byModel: { 'gpt-a': { tokens: 40 } },
    });
    expect(mine.month.tokens).toBe(40);
    expect(JSON.stringify(mine)).not.toContain('secret-graph');
    const theirs = json<{ tenant: string; limits: unknown; month: { tokens: number } }>(
      await as(KEYS.globexProducer, 'GET', '/v1/usage'),
    );
    expect(theirs).toMatchObject({ tenant: 'globex', limits: { tokensPerDay: 500 }, month: { tokens: 7000 } });
  });
});
