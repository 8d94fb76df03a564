import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { TenantAdmission } from '../../shared/operations/runs/tenant-admission.js';
import { TenantInflight } from '../../shared/operations/limits/tenant-inflight.js';
import { Keys } from '../../shared/store/keys.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * The admission takes the tenant's in-flight slot and checks its storage budget at once: a run either
 * budget refuses holds nothing afterwards, and the in-flight cap's refusal is the one a caller sees when
 * both refuse (as when they were asked in turn).
 */
describe('tenant admission', () => {
  const config = testConfig();
  const redis = new Redis(config.redisUrl!);
  const keys = new Keys(config.keyPrefix);
  afterAll(() => redis.disconnect());
  const admission = new TenantAdmission(redis, keys, { tenantMaxInflight: 1, tenantMaxBytes: 100 });
  const inflight = new TenantInflight(redis, keys, 1);
  const request = (tenant: string, runId: string, bytes: number) =>
    admission.admit({ tenant, runId, origin: 'batch', bytes });

  it('a run the storage budget refuses leaves no in-flight slot taken', async () => {
    await expect(request('roomy', 'run-big', 1000)).rejects.toMatchObject({ code: 'STORAGE_BUDGET_EXCEEDED' });
    expect(await inflight.count('roomy')).toBe(0);
    // The slot is there for the next run that fits.
    await request('roomy', 'run-small', 10);
    expect(await inflight.count('roomy')).toBe(1);
  });

  it('at the in-flight cap, a run too large for the budget too is refused for the cap', async () => {
    await request('busy', 'run-first', 10);
    await expect(request('busy', 'run-second', 1000)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(await inflight.count('busy')).toBe(1);
  });
});
