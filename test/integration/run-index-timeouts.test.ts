import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReader } from '../../producer/client/run-reader.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { StallingTcpProxy } from '../helpers/stalling-tcp-proxy.js';
import { startStalledReader } from '../helpers/stalled-reader.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const RUNS = 12;
const TIMEOUT_MS = 300;
const STALL_MS = 1500;

describe('run listing when Redis does not answer in time', () => {
  let env: TestEnv;
  let proxy: StallingTcpProxy;
  let reader: RunReader;
  let stalled: Awaited<ReturnType<typeof startStalledReader>>;
  beforeAll(async () => {
    env = await startTestEnv();
    stalled = await startStalledReader(env, TIMEOUT_MS);
    ({ proxy, reader } = stalled);
    for (let i = 0; i < RUNS; i += 1) await env.client.enqueue({ graph: 'chain', input: { steps: 1 } });
  });
  afterAll(async () => {
    await stalled.close();
    await env.close();
  });

  it('a listing whose run reads time out fails retryably and removes no entry from the index', async () => {
    const index = env.client.store.keys.tenantRuns(env.config.tenant);
    expect(await env.client.store.redis.zcard(index)).toBe(RUNS);
    expect((await reader.list({ limit: 50 })).runs).toHaveLength(RUNS);

    // The stall starts as the reader sends the runs' reads: they time out, and Redis runs them (and
    // anything the reader sends meanwhile) once it ends.
    proxy.stallOn('HGETALL', STALL_MS);
    const error = await reader.list({ limit: 50 }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(proxy.stalls()).toBe(1);
    // A PING answered through the proxy: the stall is over and Redis has run all the reader sent before it.
    await eventually(() => reader.store.redis.ping().catch(() => undefined), 10_000, 'the stall to end');
    expect(await env.client.store.redis.zcard(index)).toBe(RUNS);
    expect((await reader.list({ limit: 50 })).runs).toHaveLength(RUNS);
    // The caller was told: a retryable Redis fault, not a short page.
    expect(error).toBeInstanceOf(AgentqError);
    expect(error).toMatchObject({ code: 'REDIS_UNAVAILABLE', retryable: true });
  });
  it('a listing drops an entry whose run a successful read found gone, once it is past the grace for runs being created', async () => {
    const index = env.client.store.keys.tenantRuns(env.config.tenant);
    // Entries without a run: one from a day ago (its run expired), one from now (its run may be on its way).
    await env.client.store.redis.zadd(index, Date.now() - 86_400_000, 'gone-long-ago', Date.now(), 'not-yet-written');
    expect((await reader.list({ limit: 50 })).runs).toHaveLength(RUNS);
    expect(await env.client.store.redis.zscore(index, 'gone-long-ago')).toBeNull();
    expect(await env.client.store.redis.zscore(index, 'not-yet-written')).not.toBeNull();
    await env.client.store.redis.zrem(index, 'not-yet-written');
  });
  it('reindex puts back the entries a tenant list lost, of that tenant only, and adds nothing else', async () => {
    const index = env.client.store.keys.tenantRuns(env.config.tenant);
    const other = await env.client.enqueue({ graph: 'chain', input: { steps: 1 }, tenant: 'other' });
    const otherIndex = env.client.store.keys.tenantRuns('other');
    const ids = await env.client.store.redis.zrange(index, '0', '-1');
    const lost = ids.slice(0, 5);
    await env.client.store.redis.zrem(index, ...lost);
    await env.client.store.redis.zrem(otherIndex, other.id);

    // Small passes, so the repair takes several SCAN calls.
    expect(await reader.reindex({ tenant: env.config.tenant, count: 10 })).toEqual({ runs: RUNS, added: 5 });
    expect((await env.client.store.redis.zrange(index, '0', '-1')).sort()).toEqual([...ids].sort());
    expect(await env.client.store.redis.zcard(otherIndex)).toBe(0);
    expect((await reader.list({ limit: 50 })).runs).toHaveLength(RUNS);

    expect(await reader.reindex()).toEqual({ runs: RUNS + 1, added: 1 });
    expect(await env.client.store.redis.zrange(otherIndex, '0', '-1')).toEqual([other.id]);
  });
});
