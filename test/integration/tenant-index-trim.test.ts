import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('retention and the tenant run lists', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_RETENTION_SECONDS: '1' } });
  });
  afterAll(async () => env.close());

  it('the reconciler drops expired runs from their tenant list and keeps the live ones', async () => {
    const redis = env.client.store.redis;
    const index = env.client.store.keys.tenantRuns(env.config.tenant);
    const old = await Promise.all([1, 2, 3].map(() => env.client.enqueue({ graph: 'chain', input: { steps: 1 } })));
    for (const run of old) await env.client.wait(run.id);
    // Retention (1 s here) expires the runs' keys; their list entries stay until something drops them.
    await eventually(
      async () => (await Promise.all(old.map((run) => env.client.get(run.id)))).every((record) => record === null),
      10_000,
      'the runs to expire',
    );
    expect(await redis.zcard(index)).toBe(3);
    const live = await env.client.enqueue({ graph: 'chain', input: { steps: 1, sleepMs: 2000 } });

    const report = await env.worker.sweep();
    expect(report.trimmed).toBe(3);
    expect(await redis.zrange(index, '0', '-1')).toEqual([live.id]);
    await env.client.wait(live.id);
  });
});
