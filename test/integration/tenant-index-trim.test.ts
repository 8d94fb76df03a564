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

describe('repairing the tenant run lists', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_RECONCILE_REINDEX_KEYS: '5000' } });
  });
  afterAll(async () => env.close());

  it("the reconciler's sweeps put back the runs a tenant list lost, a bounded scan pass each", async () => {
    const redis = env.client.store.redis;
    const index = env.client.store.keys.tenantRuns('repaired');
    const runs = await Promise.all(
      [1, 2, 3].map(() => env.client.enqueue({ graph: 'chain', input: { steps: 1 }, tenant: 'repaired' })),
    );
    await redis.zrem(index, runs[0]!.id, runs[1]!.id);
    let reindexed = 0;
    // Each sweep scans the next part of the keyspace (shared with other tests' keys): as many as it takes.
    await eventually(
      async () => {
        reindexed += (await env.worker.sweep()).reindexed;
        return (await redis.zcard(index)) === 3;
      },
      30_000,
      'the sweeps to put the runs back',
    );
    expect(reindexed).toBe(2);
    expect((await env.client.list({ tenant: 'repaired' })).runs.map((run) => run.id).sort()).toEqual(
      runs.map((run) => run.id).sort(),
    );
    for (const run of runs) await env.client.wait(run.id);
  });
});
