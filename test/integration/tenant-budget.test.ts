import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { Keys } from '../../shared/store/keys.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { testConfig } from '../helpers/test-env.js';

describe('tenant budgets shared by workers', () => {
  const config = testConfig();
  const connections = [new Redis(config.redisUrl!), new Redis(config.redisUrl!)];
  const keys = new Keys(config.keyPrefix);
  afterAll(() => connections.forEach((connection) => connection.disconnect()));
  const noon = Date.UTC(2026, 10, 25, 12);

  async function refusal(promise: Promise<unknown>): Promise<AgentqError> {
    const error = await promise.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    if (!AgentqError.isInstance(error)) throw new Error(`expected an AgentqError, got ${String(error)}`);
    return error;
  }

  it('refuses the call that would pass the daily token budget before it is made, naming the limit', async () => {
    const budget = new TenantBudget(connections[0]!, keys);
    await budget.setLimits('acme', { tokensPerDay: 1000 });
    const first = await budget.reserve('acme', { callId: 'r1.1', tokens: 600, costUsd: 0.01 }, noon);
    await budget.settle(
      'acme',
      first,
      { callId: 'r1.1', tokens: 700, costUsd: 0.012, graph: 'qa', model: 'gpt-a' },
      noon,
    );
    const error = await refusal(budget.reserve('acme', { callId: 'r1.2', tokens: 400, costUsd: 0.01 }, noon));
    expect(error).toMatchObject({
      code: 'TENANT_BUDGET_EXCEEDED',
      retryable: false,
      details: { tenant: 'acme', limit: 'tokensPerDay', limitValue: 1000, used: 700, estimate: 400 },
    });
    expect(error.message).toContain('/v1/admin/tenants/acme/limits');
    // 300 tokens still fit; the next UTC day starts from zero.
    await budget.reserve('acme', { callId: 'r1.3', tokens: 300, costUsd: 0 }, noon);
    await budget.reserve('acme', { callId: 'r1.4', tokens: 900, costUsd: 0 }, noon + 86_400_000);
  });

  it('concurrent workers cannot pass the budget: in-flight estimates count before any call is settled', async () => {
    const budgets = connections.map((connection) => new TenantBudget(connection, keys));
    await budgets[0]!.setLimits('busy', { tokensPerDay: 1000 });
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async (_unused, index) => {
        const budget = budgets[index % 2]!;
        const callId = `run${index}.1`;
        try {
          const reservation = await budget.reserve('busy', { callId, tokens: 100, costUsd: 0 }, noon);
          await new Promise((resolve) => setTimeout(resolve, 20)); // the model call: others reserve meanwhile
          await budget.settle('busy', reservation, { callId, tokens: 100, costUsd: 0, graph: 'g', model: 'm' }, noon);
          return 'made';
        } catch (error) {
          if (AgentqError.isInstance(error) && error.code === 'TENANT_BUDGET_EXCEEDED') return 'refused';
          throw error;
        }
      }),
    );
    expect(outcomes.filter((outcome) => outcome === 'made')).toHaveLength(10);
    const usage = await budgets[0]!.usage('busy', { days: 1, now: noon });
    expect(usage.days[0]).toMatchObject({ period: '2026-11-25', tokens: 1000, calls: 10 });
  });

  it('counts a re-delivered settle once, and shows spend per day, graph and model', async () => {
    const budget = new TenantBudget(connections[0]!, keys);
    const spend = { callId: 'r9.3', tokens: 120, costUsd: 0.0025, graph: 'qa', model: 'gpt-a' };
    expect(await budget.settle('usage', undefined, spend, noon)).toBe(true);
    expect(await budget.settle('usage', undefined, spend, noon)).toBe(false);
    await budget.settle(
      'usage',
      undefined,
      { callId: 'r9.4', tokens: 30, costUsd: 0.001, graph: 'rag', model: 'gpt-a' },
      noon,
    );
    await budget.settle(
      'usage',
      undefined,
      { callId: 'r8.1', tokens: 5, costUsd: 0, graph: 'qa', model: 'gpt-b' },
      noon - 86_400_000,
    );
    const usage = await budget.usage('usage', { days: 2, now: noon });
    expect(usage.days).toEqual([
      {
        period: '2026-11-25',
        tokens: 150,
        costUsd: 0.0035,
        calls: 2,
        byGraph: { qa: { tokens: 120, costUsd: 0.0025 }, rag: { tokens: 30, costUsd: 0.001 } },
        byModel: { 'gpt-a': { tokens: 150, costUsd: 0.0035 } },
      },
      {
        period: '2026-11-24',
        tokens: 5,
        costUsd: 0,
        calls: 1,
        byGraph: { qa: { tokens: 5, costUsd: 0 } },
        byModel: { 'gpt-b': { tokens: 5, costUsd: 0 } },
      },
    ]);
    expect(usage.month).toMatchObject({ period: '2026-11', tokens: 155, calls: 3 });
  });

  it('limits cost per month, and a released or expired reservation stops counting', async () => {
    const budget = new TenantBudget(connections[1]!, keys, { reservationTtlMs: 60_000 });
    await budget.setLimits('spender', { costUsdPerMonth: 1 });
    await budget.settle(
      'spender',
      undefined,
      { callId: 'a', tokens: 1, costUsd: 0.7, graph: 'g', model: 'm' },
      Date.UTC(2026, 10, 2),
    );
    const held = await budget.reserve('spender', { callId: 'b', tokens: 1, costUsd: 0.25 }, noon);
    expect(await refusal(budget.reserve('spender', { callId: 'c', tokens: 1, costUsd: 0.25 }, noon))).toMatchObject({
      details: { limit: 'costUsdPerMonth', limitValue: 1, used: 0.95, estimate: 0.25 },
    });
    await budget.release(held);
    const again = await budget.reserve('spender', { callId: 'c', tokens: 1, costUsd: 0.25 }, noon);
    // Its worker died: after the reservation's ttl the estimate no longer blocks others.
    await budget.reserve('spender', { callId: 'd', tokens: 1, costUsd: 0.25 }, noon + 61_000);
    expect(again.member).toContain('c|');
    // Next month starts from zero.
    await budget.reserve('spender', { callId: 'e', tokens: 1, costUsd: 0.9 }, Date.UTC(2026, 11, 1));
  });

  it('applies configured defaults until an admin sets a tenant its own limits, and tenants never share budgets', async () => {
    const budget = new TenantBudget(connections[0]!, keys, { defaults: { tokensPerDay: 50 } });
    expect(await budget.getLimits('fresh')).toEqual({ limits: { tokensPerDay: 50 }, source: 'defaults' });
    expect(await refusal(budget.reserve('fresh', { callId: 'x', tokens: 60, costUsd: 0 }, noon))).toMatchObject({
      code: 'TENANT_BUDGET_EXCEEDED',
    });
    await budget.setLimits('fresh', {});
    expect(await budget.getLimits('fresh')).toEqual({ limits: {}, source: 'tenant' });
    await budget.reserve('fresh', { callId: 'x', tokens: 60, costUsd: 0 }, noon);
    await budget.setLimits('tight', { tokensPerDay: 0, costUsdPerDay: 2.5 });
    expect(await budget.getLimits('tight')).toEqual({
      limits: { tokensPerDay: 0, costUsdPerDay: 2.5 },
      source: 'tenant',
    });
    expect(await refusal(budget.reserve('tight', { callId: 'y', tokens: 1, costUsd: 0 }, noon))).toMatchObject({
      details: { limit: 'tokensPerDay' },
    });
    await budget.settle('fresh', undefined, { callId: 'z', tokens: 10_000, costUsd: 9, graph: 'g', model: 'm' }, noon);
    expect((await budget.usage('tight', { days: 1, now: noon })).days[0]).toMatchObject({ tokens: 0, calls: 0 });
  });

  it('makes a lazy estimate only for a tenant with limits, and holds and enforces it there', async () => {
    const budget = new TenantBudget(connections[0]!, keys);
    let estimates = 0;
    const lazy = (callId: string, tokens: number) => ({
      callId,
      estimate: async () => {
        estimates += 1;
        return { tokens, costUsd: 0 };
      },
    });
    // No limits (and no defaults): nothing is held, and the prompt is never counted.
    const free = await budget.reserve('unlimited', lazy('f1', 5_000_000), noon);
    expect(free.member).toBe('');
    await budget.release(free);
    expect(estimates).toBe(0);
    expect(await connections[0]!.zcard(keys.tenantBudget('unlimited').reservations)).toBe(0);
    // Limits: estimated, held like an eager estimate, and refused past the limit.
    await budget.setLimits('limited', { tokensPerDay: 1000 });
    const held = await budget.reserve('limited', lazy('l1', 600), noon);
    expect(held.member).toBe('l1|600|0');
    expect(await refusal(budget.reserve('limited', lazy('l2', 500), noon))).toMatchObject({
      code: 'TENANT_BUDGET_EXCEEDED',
      details: { limit: 'tokensPerDay', used: 600, estimate: 500 },
    });
    expect(estimates).toBe(2);
  });

  it('a negative budget or an unknown field is INVALID_INPUT naming the field', async () => {
    const budget = new TenantBudget(connections[0]!, keys);
    await budget.setLimits('strict', { tokensPerDay: 1000 });
    expect(await refusal(budget.setLimits('strict', { tokensPerDay: -1 }))).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'tokensPerDay' },
    });
    expect(await refusal(budget.setLimits('strict', { costUsdPerMonth: -0.5 }))).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'costUsdPerMonth' },
    });
    expect(await refusal(budget.setLimits('strict', { tokensPerDay: 1.5 }))).toMatchObject({
      details: { field: 'tokensPerDay' },
    });
    const unknown = await refusal(budget.setLimits('strict', { tokensPerWeek: 5 }));
    expect(unknown).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'tokensPerWeek' } });
    expect(unknown.message).toContain('tokensPerDay, tokensPerMonth, costUsdPerDay, costUsdPerMonth');
    // The earlier valid limits are untouched by the refused updates.
    expect((await budget.getLimits('strict')).limits).toEqual({ tokensPerDay: 1000 });
  });
});
