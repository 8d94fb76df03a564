import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { TenantInflight } from '../../shared/operations/limits/tenant-inflight.js';
import { Keys } from '../../shared/store/keys.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * The in-flight cap held by processes whose clocks disagree: a slot reserved for a run still being created (no run
 * record yet) is left alone for a grace; a creator whose clock runs 15 minutes ahead must not take it for stale.
 */
describe('tenant in-flight slots across skewed clocks', () => {
  const config = testConfig();
  const redis = new Redis(config.redisUrl!);
  const keys = new Keys(config.keyPrefix);
  afterEach(() => vi.useRealTimers());
  afterAll(() => redis.disconnect());

  it('a fresh reservation holds the cap against a creator whose clock runs ahead', async () => {
    const inflight = new TenantInflight(redis, keys, 1);
    expect(await inflight.take('skewed', 'run-being-created')).toBe('new');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 15 * 60_000);
    expect(await inflight.take('skewed', 'run-next')).toBe('full');
    expect(await inflight.count('skewed')).toBe(1);
  });
});
