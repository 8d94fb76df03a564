import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageBudget } from '../../shared/operations/limits/storage-budget.js';
import { storedRunBytes } from '../../bench/lib/stored-bytes.js';
import { startCountedRedis, type CountedRedis } from '../helpers/counted-redis.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * A step's transition stores its step record, history, state, step-end and next step-start events and its
 * recording boundary in one script: their bytes go to the tenant's storage ledger as one charge at the
 * script's end (two Redis calls), not one per write, and the ledger still holds what the run keeps.
 */
describe('storage charges of a step transition', () => {
  let redis: CountedRedis;
  let env: TestEnv;
  beforeAll(async () => {
    redis = await startCountedRedis();
    env = await startTestEnv({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await env?.close();
    await redis?.stop();
  });

  it('a 30-step run: about one charge per step, and the ledger holds every byte the run keeps', async () => {
    const steps = 30;
    const [before, lengths, reads] = [
      await redis.calls('incrby'),
      await redis.calls('xlen'),
      await redis.calls('hget'),
    ];
    const run = await env.client.enqueue({ tenant: 'charged', graph: 'chain', input: { steps, appendMessages: true } });
    const done = await env.client.wait(run.id, { timeoutMs: 60_000 });
    expect(done.status).toBe('completed');
    // One charge per transition, plus a few for the run's creation, first step and end (was four per transition:
    // 125 calls for this run).
    expect((await redis.calls('incrby')) - before).toBeLessThanOrEqual(steps + 6);
    // The event stream's length is read once per script: a transition's second event (the next step's start)
    // counts on from its first (was read for each event: 66 for this run).
    expect((await redis.calls('xlen')) - lengths).toBeLessThanOrEqual(steps + 6);
    // The transition reads the run's ledger with its cursor (one HMGET), not apart (39 HGETs for this run).
    expect((await redis.calls('hget')) - reads).toBeLessThanOrEqual(10);
    const budget = new StorageBudget(env.client.store.redis, env.client.store.keys, {
      defaultMaxBytes: env.config.tenantMaxBytes,
      retentionSeconds: env.config.retentionSeconds,
    });
    const charged = await budget.usage('charged');
    const bytes = await storedRunBytes(env.client.store.redis, env.client.store.keys, run.id);
    expect(charged).toBeGreaterThanOrEqual(bytes * 0.97 - 400);
    expect(charged).toBeLessThanOrEqual(bytes * 1.03 + 400);
  });

  it('a run whose event stream is trimmed as it goes (AGENTQ_EVENTS_MAXLEN=10): the ledger still holds what it keeps', async () => {
    const trimmed = await startTestEnv({ env: { REDIS_URL: redis.url, AGENTQ_EVENTS_MAXLEN: '10' } });
    try {
      const run = await trimmed.client.enqueue({
        tenant: 'trimmed',
        graph: 'chain',
        input: { steps: 90, appendMessages: true },
      });
      expect((await trimmed.client.wait(run.id, { timeoutMs: 60_000 })).status).toBe('completed');
      const { redis: store, keys } = trimmed.client.store;
      // Trimmed a hundred at a time once past the cap: never more than cap + 100 events kept.
      expect(await store.xlen(keys.run(run.id).events)).toBeLessThan(110);
      const budget = new StorageBudget(store, keys, {
        defaultMaxBytes: trimmed.config.tenantMaxBytes,
        retentionSeconds: trimmed.config.retentionSeconds,
      });
      const charged = await budget.usage('trimmed');
      const bytes = await storedRunBytes(store, keys, run.id);
      expect(charged).toBeGreaterThanOrEqual(bytes * 0.97 - 400);
      expect(charged).toBeLessThanOrEqual(bytes * 1.03 + 400);
    } finally {
      await trimmed.close();
    }
  });
});
