import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisMetrics } from '../../shared/operations/metrics/redis-metrics.js';
import { startPrivateRedis, type PrivateRedis } from '../../shared/redis/private-redis-server.js';

/**
 * A tenant's counted spend goes to its Prometheus counters on every paid call: calls that count at the
 * same moment (a worker's many steps in flight) share one write, and each call's promise settles once
 * the write that holds its spend has landed, so the counters are exact when it does.
 */
describe('tenant usage counters', () => {
  let server: PrivateRedis;
  let redis: Redis;
  beforeAll(async () => {
    // A Redis of its own: its command counts are this file's alone.
    server = await startPrivateRedis();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  const calls = async (command: string) => {
    const stats = await redis.info('commandstats');
    return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
  };

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
