import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReader } from '../../producer/client/run-reader.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { RunStatus } from '../../shared/contracts/run-record.js';
import { seededRandom } from '../helpers/seeded-random.js';
import type { StallingTcpProxy } from '../helpers/stalling-tcp-proxy.js';
import { startStalledReader } from '../helpers/stalled-reader.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale, suiteSeed } from '../helpers/suite-scale.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const TIMEOUT_MS = 200;
/** Longer than the command timeout: every command caught in a stall times out, and Redis runs it after. */
const STALL_MS = 600;

/**
 * Redis stalls during listings (as under another tenant's heavy load, or `DEBUG SLEEP`): the reader's
 * connection goes through a proxy that stalls it, both ways, as it sends a listing's index read or its
 * runs' reads, so those commands time out and Redis runs them — and whatever the reader sent meanwhile —
 * once the stall ends. Counted: the tenant's index entries before and after, and listings that came back
 * short instead of failing.
 */
describe('chaos: Redis timeouts during run listings', () => {
  const seed = suiteSeed();
  const random = seededRandom(seed, 'run-index-timeouts');
  const runs = atScale(60, 300);
  const listings = atScale(30, 150);
  let env: TestEnv;
  let proxy: StallingTcpProxy;
  let reader: RunReader;
  let stalled: Awaited<ReturnType<typeof startStalledReader>>;
  const expected: Record<'all' | 'failed', number> = { all: 0, failed: 0 };

  beforeAll(async () => {
    env = await startTestEnv();
    stalled = await startStalledReader(env, TIMEOUT_MS);
    ({ proxy, reader } = stalled);
    // Completed and failed runs (an input the graph refuses fails at once), as bulk retry finds them.
    const created = [];
    for (let i = 0; i < runs; i += 1)
      created.push(await env.client.enqueue({ graph: 'chain', input: { steps: i % 3 === 0 ? 'x' : 1 } }));
    for (const run of created) await env.client.wait(run.id, { timeoutMs: 60_000 });
    expected.all = runs;
    expected.failed = created.filter((_run, i) => i % 3 === 0).length;
  }, 300_000);
  afterAll(async () => {
    await stalled.close();
    await env.close();
  });

  /** Every page of the tenant's runs (or its failed ones), 25 at a time. */
  const listAll = async (status?: RunStatus): Promise<number> => {
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = await reader.list({ limit: 25, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
      count += page.runs.length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return count;
  };

  it(
    'loses no index entry, and no listing comes back short',
    async () => {
      const index = env.client.store.keys.tenantRuns(env.config.tenant);
      const before = await env.client.store.redis.zcard(index);
      expect(before).toBe(runs);
      let failedListings = 0;
      let shortListings = 0;
      const otherErrors: string[] = [];
      for (let i = 0; i < listings; i += 1) {
        // Most listings meet a stall, on the index read or on the runs' reads, on a page chosen by chance.
        const roll = random();
        if (roll < 0.4) proxy.stallOn('HGETALL', STALL_MS);
        else if (roll < 0.7) proxy.stallOn('ZREVRANGEBYSCORE', STALL_MS);
        else proxy.stallOn('HGETALL', STALL_MS, 0);
        const status = random() < 0.5 ? 'failed' : undefined;
        try {
          const count = await listAll(status);
          if (count !== (status ? expected.failed : expected.all)) shortListings += 1;
        } catch (error) {
          if (AgentqError.isInstance(error) && error.code === 'REDIS_UNAVAILABLE') failedListings += 1;
          else otherErrors.push(String(error));
        }
        // Wait out the stall (a PING through the proxy answers after it), so the next listing starts clean.
        await eventually(() => reader.store.redis.ping().catch(() => undefined), 10_000, 'the stall to end');
      }
      const after = await env.client.store.redis.zcard(index);
      const figures = {
        index_entries_before: before,
        index_entries_lost: before - after,
        listings: listings,
        stalls: proxy.stalls(),
        listings_failed_retryably: failedListings,
        listings_short: shortListings,
      };
      for (const [name, value] of Object.entries(figures))
        recordFigure({
          scenario: `redis timeouts during listings (seed ${seed})`,
          name,
          value,
          ...(name === 'index_entries_lost' || name === 'listings_short' ? { goal: '= 0' } : {}),
        });
      expect(otherErrors).toEqual([]);
      expect(figures.index_entries_lost).toBe(0);
      expect(shortListings).toBe(0);
      // The stalls did land: listings failed, and each failure was one a caller may retry.
      expect(failedListings).toBeGreaterThan(0);
      // And the reader lists them all once Redis answers in time again. Its commands time out at 200 ms, which
      // a loaded machine may exceed without any stall: a listing that fails that way is tried again.
      const whole = await eventually(
        () => listAll().catch((error: unknown) => (AgentqError.isInstance(error) ? undefined : Promise.reject(error))),
        30_000,
        'a listing without a timeout',
      );
      expect(whole).toBe(runs);
    },
    atScale(300_000, 900_000),
  );
});
