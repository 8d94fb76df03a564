import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { Keys } from '../../shared/store/keys.js';
import { ServedGraphs } from '../../shared/store/served-graphs.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * Which graphs live workers serve, with clocks that disagree: a worker whose clock runs 15 minutes ahead announces
 * itself; another worker's fresh entry must stay live (not swept as 15 minutes old), and a producer with a true
 * clock must see both.
 */
describe('served graphs across skewed clocks', () => {
  const config = testConfig();
  const redis = new Redis(config.redisUrl!);
  const keys = new Keys(config.keyPrefix);
  afterEach(() => vi.useRealTimers());
  afterAll(() => redis.disconnect());

  it("a worker ahead neither sweeps another's entry nor hides it", async () => {
    const served = new ServedGraphs({ redis, keys, heartbeatMs: 1000 });
    await served.announce('w-true', ['chain@1']);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 15 * 60_000);
    await served.announce('w-ahead', ['other@1']);
    expect((await served.live()).ids).toEqual(['chain@1', 'other@1']);
    vi.useRealTimers();
    expect(await new ServedGraphs({ redis, keys, heartbeatMs: 1000 }).live()).toMatchObject({
      ids: ['chain@1', 'other@1'],
      workers: 2,
    });
  });
});
