import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../shared/redis/private-redis-server.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { Keys } from '../../shared/store/keys.js';
import { CLAIM, CLAIM_MANY } from '../../shared/operations/batches/batch-scripts.js';
import type { ClaimReply } from '../../shared/operations/batches/batch-meta.js';

// A claim says how many slots it left free with items left to fill them: the dispatcher skips the claim
// after it when none are (an eager start's hand-off then waits for no further round trip).
describe('batch claims', () => {
  let server: PrivateRedis;
  let redis: Redis;
  const keys = new Keys('claims');
  beforeAll(async () => {
    server = await startPrivateRedis({});
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  async function batchOf(id: string, { concurrency, total }: { concurrency: number; total: number }) {
    const batch = keys.batch(id);
    await redis.hset(batch.meta, { id, status: 'running', concurrency, total, next: 0 });
    await redis.rpush(batch.items, ...Array.from({ length: total }, (_, index) => JSON.stringify({ id: `q${index}` })));
    return (script: string, ...args: (string | number)[]) =>
      runScript<unknown[]>(redis, script, [batch.meta, batch.inflight, batch.items], [`${id}.i`, Date.now(), ...args]);
  }

  it('counts the free slots down to 0 as claims fill them; the next claim finds none', async () => {
    const claim = await batchOf('bat_a', { concurrency: 3, total: 10 });
    const free = async () => ((await claim(CLAIM)) as ClaimReply)[3];
    expect([await free(), await free(), await free()]).toEqual([2, 1, 0]);
    expect(await claim(CLAIM)).toEqual([-3]);
    // A slot freed (a run finished): one claim fills it, and says none is left.
    await redis.srem(keys.batch('bat_a').inflight, 'bat_a.i0');
    const [index, , , left] = (await claim(CLAIM)) as ClaimReply;
    expect([index, left]).toEqual([3, 0]);
  });

  it('says 0 once the last item is claimed, whatever slots are free', async () => {
    const claim = await batchOf('bat_b', { concurrency: 5, total: 2 });
    expect(((await claim(CLAIM)) as ClaimReply)[3]).toBe(4);
    expect(((await claim(CLAIM)) as ClaimReply)[3]).toBe(0);
    expect(await claim(CLAIM)).toEqual([-2]);
  });

  it('a first wave claimed at once still stops at the free slots', async () => {
    const claim = await batchOf('bat_c', { concurrency: 4, total: 10 });
    const reply = await claim(CLAIM_MANY, 32);
    expect(reply.slice(0, -1)).toEqual([0, 1, 2, 3].map((index) => [index, JSON.stringify({ id: `q${index}` })]));
    expect(reply.at(-1)).toBe(-3);
  });
});
