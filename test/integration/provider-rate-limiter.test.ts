import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { Keys } from '../../shared/store/keys.js';
import { ProviderRateLimiter } from '../../shared/operations/limits/provider-rate-limiter.js';
import { testConfig } from '../helpers/test-env.js';
import { maxInAnyWindow } from '../helpers/max-in-any-window.js';

describe('provider limits shared by workers', () => {
  const config = testConfig();
  const connections = [new Redis(config.redisUrl!), new Redis(config.redisUrl!)];
  const keys = new Keys(config.keyPrefix);
  afterAll(() => connections.forEach((connection) => connection.disconnect()));

  it('two workers sharing a request budget never exceed it in any window', async () => {
    // A 2-second window stands in for the minute: the same script, 30× faster.
    const limiters = connections.map((connection) => new ProviderRateLimiter(connection, keys, 2000));
    const granted: number[] = [];
    const until = Date.now() + 5000;
    await Promise.all(
      limiters.map(async (limiter) => {
        while (Date.now() < until) {
          const result = await limiter.acquire('openai', 'm1', { requestsPerMinute: 20, tokensPerMinute: 0 }, 10);
          if (result.granted) granted.push(Number(result.ticket.split(':')[0]));
          else await new Promise((resolve) => setTimeout(resolve, Math.min(result.retryAfterMs, 200)));
        }
      }),
    );
    expect(granted.length).toBeGreaterThanOrEqual(40); // the budget was actually used, window after window
    expect(maxInAnyWindow(granted, 2000)).toBeLessThanOrEqual(20);
  });

  it('limits tokens per window, says how long to wait, and settles estimates with real usage', async () => {
    const limiter = new ProviderRateLimiter(connections[0]!, keys, 2000);
    const limits = { requestsPerMinute: 0, tokensPerMinute: 1000 };
    const first = await limiter.acquire('openai', 'm2', limits, 800);
    expect(first.granted).toBe(true);
    const second = await limiter.acquire('openai', 'm2', limits, 400);
    expect(second).toMatchObject({ granted: false });
    expect(second.granted === false && second.retryAfterMs).toBeGreaterThan(0);
    expect(second.granted === false && second.retryAfterMs).toBeLessThanOrEqual(2000);
    // The first request really used 300 tokens: now 400 more fit.
    await limiter.settle('openai', 'm2', first.granted ? first.ticket : '', 300);
    expect((await limiter.acquire('openai', 'm2', limits, 400)).granted).toBe(true);
    expect(await limiter.acquire('openai', 'm2', limits, 5000)).toMatchObject({ granted: false, impossible: true });
  });
});
