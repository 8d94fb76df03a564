import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { Keys } from '../../shared/store/keys.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { testConfig } from '../helpers/test-env.js';

/** `agentq limits` and `agentq usage`: tenant budgets from the command line. */
describe('the agentq CLI: tenant budgets', () => {
  const config = testConfig();
  const redis = new Redis(config.redisUrl!);
  const budget = new TenantBudget(redis, new Keys(config.keyPrefix));
  const cli = (...args: string[]) => runCli(args, cliEnv(config));
  afterAll(() => redis.disconnect());

  it("limits set replaces a tenant's limits, limits show reads them, and the worker-side budget enforces them", async () => {
    const set = await cli(
      'limits',
      'set',
      '--tenant',
      'acme',
      '--tokens-per-day',
      '500',
      '--cost-usd-per-month',
      '12.5',
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ tenant: 'acme', limits: { tokensPerDay: 500, costUsdPerMonth: 12.5 } });
    const show = await cli('limits', 'show', '--tenant', 'acme');
    expect(JSON.parse(show.stdout)).toEqual({
      tenant: 'acme',
      limits: { tokensPerDay: 500, costUsdPerMonth: 12.5 },
      source: 'tenant',
    });
    await expect(budget.reserve('acme', { callId: 'cli-1', tokens: 501, costUsd: 0 })).rejects.toMatchObject({
      code: 'TENANT_BUDGET_EXCEEDED',
    });
  });

  it('usage shows the tenant its spend per day and month, by graph and model', async () => {
    await budget.settle('globex', undefined, { callId: 'u1', tokens: 70, costUsd: 0.5, graph: 'qa', model: 'gpt-x' });
    const usage = await cli('usage', '--tenant', 'globex', '--days', '2', '--json');
    expect(usage.code, usage.stderr).toBe(0);
    const parsed = JSON.parse(usage.stdout) as { tenant: string; days: unknown[]; month: unknown };
    expect(parsed.tenant).toBe('globex');
    expect(parsed.days).toHaveLength(2);
    expect(parsed.days[0]).toMatchObject({
      tokens: 70,
      costUsd: 0.5,
      calls: 1,
      byGraph: { qa: { tokens: 70 } },
      byModel: { 'gpt-x': { tokens: 70 } },
    });
    const text = await cli('usage', '--tenant', 'globex', '--days', '1');
    expect(text.stdout).toMatch(
      /^tenant globex\n\d{4}-\d{2} {2}tokens=70 {2}cost_usd=0.5 {2}calls=1\n\d{4}-\d{2}-\d{2} {2}tokens=70/,
    );
  });

  it('a negative limit or a bad number is a usage error (exit 2) naming it', async () => {
    const negative = await cli('limits', 'set', '--tenant', 'acme', '--cost-usd-per-day', '-3');
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('costUsdPerDay');
    const nan = await cli('limits', 'set', '--tokens-per-day', 'lots');
    expect(nan.code).toBe(2);
    expect(nan.stderr).toContain("--tokens-per-day must be a number, got 'lots'");
    expect(JSON.parse((await cli('limits', 'show', '--tenant', 'acme')).stdout).limits).toEqual({
      tokensPerDay: 500,
      costUsdPerMonth: 12.5,
    });
  });
});
