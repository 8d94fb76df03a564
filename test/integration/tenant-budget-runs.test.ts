import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Keys } from '../../shared/store/keys.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { RedisMetrics } from '../../shared/operations/metrics/redis-metrics.js';
import { parsePrometheusText } from '../helpers/api-prometheus-parser.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** Tenant budgets end to end: client → worker → callLanguageModel → real openai SDK → scripted server. */
describe('tenant budgets on real runs', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let redis: Redis;
  let budget: TenantBudget;

  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({
      env: {
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: 'test-key',
        LLM_MODEL: 'scripted-chat',
        AGENTQ_LLM_MAX_TOKENS: '100',
        AGENTQ_PRICES: 'scripted-chat:1:2',
        // A tenant without limits of its own gets these.
        AGENTQ_TENANT_BUDGET_DEFAULTS: '{"tokensPerDay":5000}',
      },
    });
    redis = new Redis(env.config.redisUrl!);
    budget = new TenantBudget(redis, new Keys(env.config.keyPrefix));
  });
  afterAll(async () => {
    await env.close();
    await server.close();
    redis.disconnect();
  });
  beforeEach(() => server.reset());

  const run = async (tenant: string) => {
    const queued = await env.client.enqueue({ graph: 'react-agent', input: { query: 'hello?' }, tenant });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('counts each model call of a run against its tenant, per graph and model', async () => {
    server.setScript([{ content: 'hi there', usage: { prompt_tokens: 300, completion_tokens: 20 } }]);
    const done = await run('counted');
    expect(done).toMatchObject({ status: 'completed' });
    const usage = await budget.usage('counted', { days: 1 });
    expect(usage.days[0]).toMatchObject({
      tokens: 320,
      calls: 1,
      byGraph: { 'react-agent': { tokens: 320 } },
      byModel: { 'scripted-chat': { tokens: 320 } },
    });
    // 300 input at $1/M + 20 output at $2/M.
    expect(usage.days[0]!.costUsd).toBeCloseTo(0.00034, 8);
    // The same spend as Prometheus counters, labelled with the tenant.
    const families = parsePrometheusText(await new RedisMetrics(redis, env.config.keyPrefix).render());
    const sampleOf = (name: string) =>
      families.get(name)?.samples.find((sample) => sample.labels.tenant === 'counted')?.value;
    expect(families.get('agentq_tenant_tokens_total')?.type).toBe('counter');
    expect(sampleOf('agentq_tenant_tokens_total')).toBe(320);
    expect(sampleOf('agentq_tenant_cost_usd_total')).toBeCloseTo(0.00034, 8);
  });

  it('a run whose model call would pass the tenant budget fails before the call with TENANT_BUDGET_EXCEEDED', async () => {
    await budget.setLimits('capped', { tokensPerDay: 400 });
    server.setScript([
      { content: 'first', usage: { prompt_tokens: 300, completion_tokens: 20 } },
      { content: 'never asked' },
    ]);
    expect(await run('capped')).toMatchObject({ status: 'completed' });
    const asked = server.chatRequests().length;
    const refused = await run('capped');
    expect(refused).toMatchObject({
      status: 'failed',
      error: {
        code: 'TENANT_BUDGET_EXCEEDED',
        retryable: false,
        details: { tenant: 'capped', limit: 'tokensPerDay', limitValue: 400, used: 320 },
      },
    });
    expect(server.chatRequests()).toHaveLength(asked);
    // Another tenant's budget is its own: the configured default (5000/day) lets it through.
    server.setScript([{ content: 'fine', usage: { prompt_tokens: 300, completion_tokens: 20 } }]);
    expect(await run('neighbour')).toMatchObject({ status: 'completed' });
  });
});
