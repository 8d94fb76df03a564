import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../shared/redis/private-redis-server.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { Keys } from '../../shared/store/keys.js';
import { CLAIM, CLAIM_MANY } from '../../shared/operations/batches/batch-scripts.js';
import type { ClaimReply } from '../../shared/operations/batches/batch-meta.js';
import { RUN_FIELDS } from '../../shared/operations/batches/batch-usage.js';
import { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { FinishedRun } from '../../shared/store/run-store-types.js';
import { singleStepCommit } from '../helpers/single-step-commit.js';

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

// The commit that finishes a batch's run brings the run's usage to its finish hooks: the batch's slot is
// freed (its totals taking the usage in) without a read of the run first.
describe("a batch run's last commit", () => {
  let server: PrivateRedis;
  let redis: Redis;
  let store: RedisRunStore;
  const finished = new Map<string, FinishedRun>();
  beforeAll(async () => {
    server = await startPrivateRedis({});
    redis = new Redis(server.url);
    store = new RedisRunStore(redis, {
      keyPrefix: 'commits',
      onFinished: async (runId, _status, run) => void finished.set(runId, run),
    });
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  async function completeOneStep(id: string, batchId?: string): Promise<void> {
    const now = Date.now();
    await store.creation.create({
      id,
      tenant: 'acme',
      graph: 'g',
      input: {},
      maxSteps: 5,
      now,
      ...(batchId ? { batchId } : {}),
    });
    await store.creation.admit(id, '1', {}, [{ node: 'answer' }], now);
    await store.commits.begin(id, 0, 0, { node: 'answer', superstep: 0, task: 0, attempt: 1 }, now);
    const committed = await store.commits.commit(
      singleStepCommit({
        runId: id,
        node: 'answer',
        startedAt: now,
        outcome: { kind: 'completed', output: 'done' },
        usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.5, cachedInputTokens: 40, uncachedCostUsd: 0.7 },
      }),
      now + 5,
    );
    expect(committed.kind).toBe('completed');
  }

  it("carries the run's usage fields, as the run's meta holds them", async () => {
    await completeOneStep('bat_u.i0', 'bat_u');
    const fields = finished.get('bat_u.i0')?.usageFields;
    const meta = await redis.hmget(store.keys.run('bat_u.i0').meta, ...RUN_FIELDS);
    expect(fields).toEqual(meta);
    expect(fields?.slice(0, 5).map(Number)).toEqual([100, 40, 10, 0.5, 0.7]);
  });

  it('leaves them out for a run of no batch', async () => {
    await completeOneStep('run_alone');
    expect(finished.get('run_alone')).toMatchObject({ batchId: null });
    expect(finished.get('run_alone')?.usageFields).toBeUndefined();
  });
});
