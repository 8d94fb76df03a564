import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keys } from '../../shared/store/keys.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { RedisMetrics } from '../../shared/operations/metrics/redis-metrics.js';
import { startCountedRedis, type CountedRedis } from '../helpers/counted-redis.js';

/**
 * What a worker writes and asks around each paid call, shared by the calls of the same moment
 * (sharedRoundTrip), with every call's answer and count unchanged.
 *
 * Before each paid call a worker asks whether the call's tenant has budgets to hold it against. Calls at
 * the same moment share that look (each gets one sent after it asked), so a worker's hundred steps in
 * flight do not make a hundred; what each is told is unchanged: a tenant without limits holds nothing, and
 * one that has them holds every call's estimate.
 */
describe('round trips shared by concurrent paid calls', () => {
  let server: CountedRedis;
  let redis: Redis;
  const keys = new Keys('probes');
  beforeAll(async () => {
    server = await startCountedRedis();
    redis = server.redis;
  });
  afterAll(async () => {
    await server?.stop();
  });

  const calls = (command: string) => server.calls(command);
  const lazy = (callId: string) => ({ callId, estimate: async () => ({ tokens: 100, costUsd: 0 }) });

  it('20 calls at once for a tenant without limits: none holds anything, in far fewer looks than calls', async () => {
    const budget = new TenantBudget(redis, keys);
    const before = await calls('evalsha');
    const reservations = await Promise.all(
      Array.from({ length: 20 }, (_, index) => budget.reserve('free', lazy(`run/s0.t0/${index}`))),
    );
    expect(reservations.every((reservation) => reservation.member === '')).toBe(true);
    expect((await calls('evalsha')) - before).toBeLessThanOrEqual(4);
    expect(await redis.zcard(keys.tenantBudget('free').reservations)).toBe(0);
  });

  it('20 calls at once for a tenant with limits: each holds its own estimate', async () => {
    const budget = new TenantBudget(redis, keys);
    await budget.setLimits('limited', { tokensPerDay: 10_000 });
    const reservations = await Promise.all(
      Array.from({ length: 20 }, (_, index) => budget.reserve('limited', lazy(`run/s0.t0/${index}`))),
    );
    expect(new Set(reservations.map((reservation) => reservation.member)).size).toBe(20);
    expect(await redis.zcard(keys.tenantBudget('limited').reservations)).toBe(20);
  });

  it('a limit set between two calls holds the second', async () => {
    const budget = new TenantBudget(redis, keys);
    expect((await budget.reserve('late', lazy('run/s0.t0/a'))).member).toBe('');
    await budget.setLimits('late', { tokensPerDay: 10_000 });
    expect((await budget.reserve('late', lazy('run/s0.t0/b'))).member).not.toBe('');
  });

  // Every paid call counts its spend in its tenant's day and month usage: the calls that count at the same
  // moment share one script, whose increments are summed per field; each call is still counted once per
  // call id, and told whether it was.
  it('20 settles at once: exact usage per graph and model, each counted once, in far fewer scripts than calls', async () => {
    const budget = new TenantBudget(redis, keys);
    const spend = (index: number) => ({
      callId: `run/s${index}.t0/model`,
      tokens: 10,
      costUsd: 0.25,
      graph: index % 2 === 0 ? 'even' : 'odd',
      model: 'm',
    });
    const [scripts, increments] = [await calls('evalsha'), await calls('hincrby')];
    const counted = await Promise.all(
      Array.from({ length: 20 }, (_, index) => budget.settle('sums', undefined, spend(index))),
    );
    expect(counted.every(Boolean)).toBe(true);
    expect((await calls('evalsha')) - scripts).toBeLessThanOrEqual(4);
    // 7 fields per window, each window summed per write: at most 4 writes of 2 windows of 8 fields.
    expect((await calls('hincrby')) - increments).toBeLessThanOrEqual(64);
    const { days, month } = await budget.usage('sums', { days: 1 });
    for (const period of [days[0]!, month]) {
      expect(period).toMatchObject({ tokens: 200, calls: 20 });
      expect(period.costUsd).toBeCloseTo(5);
      expect(period.byGraph).toEqual({ even: { tokens: 100, costUsd: 2.5 }, odd: { tokens: 100, costUsd: 2.5 } });
      expect(period.byModel).toEqual({ m: { tokens: 200, costUsd: 5 } });
    }
    // A call re-delivered in the same moment as a new one: the new one counts, the repeat does not.
    const again = await Promise.all([
      budget.settle('sums', undefined, spend(0)),
      budget.settle('sums', undefined, spend(20)),
    ]);
    expect(again).toEqual([false, true]);
    expect((await budget.usage('sums', { days: 1 })).month).toMatchObject({ tokens: 210, calls: 21 });
  });

  // A tenant's counted spend goes to its Prometheus counters on every paid call: calls that count at the
  // same moment share one write, and each call's promise settles once the write holding its spend landed.
  it('20 calls at once: exact totals per tenant, in far fewer writes than calls', async () => {
    const metrics = new RedisMetrics(redis, 'usage');
    const before = await calls('hincrby');
    await Promise.all(
      Array.from({ length: 20 }, (_, index) => metrics.tenantUsage(index % 2 === 0 ? 'acme' : 'beta', 10, 0.25)),
    );
    const counters = await redis.hgetall(metrics.keys.metrics('tenant-usage'));
    expect(counters).toEqual({
      '["acme","tokens"]': '100',
      '["acme","cost"]': '2.5',
      '["beta","tokens"]': '100',
      '["beta","cost"]': '2.5',
    });
    // The first call's write goes at once; the 19 that come while it is in flight share the next.
    expect((await calls('hincrby')) - before).toBeLessThanOrEqual(4);
    // A call after those have landed is counted, and its promise waits for its own write.
    await metrics.tenantUsage('acme', 1, 0);
    expect(await redis.hget(metrics.keys.metrics('tenant-usage'), '["acme","tokens"]')).toBe('101');
  });
});
