import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';

/**
 * The test run's own Redis is started with `maxmemory-policy noeviction` (startPrivateRedis): BullMQ
 * prints "IMPORTANT! Eviction policy is …" for every connection to any other policy, which used to
 * flood the test output. Only test/chaos/config-guard.test.ts uses an evicting policy, on a Redis of
 * its own, and catches those lines.
 */
describe('the Redis of the test run', () => {
  it('has maxmemory-policy noeviction', async () => {
    const redis = new Redis(inject('redisUrl'));
    try {
      expect(await redis.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    } finally {
      redis.disconnect();
    }
  });
});
