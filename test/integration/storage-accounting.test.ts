import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageBudget } from '../../shared/operations/limits/storage-budget.js';
import { startTestEnv, testConfig, type TestEnv } from '../helpers/test-env.js';
import { storedRunBytes } from '../../bench/lib/stored-bytes.js';

/**
 * The storage budget counts every byte a run keeps — its meta and input, state, history, step log, events,
 * recording and output, and a fork's whole copy — as the run store's scripts store them, and gives them
 * back when the run is purged or expires. Each check compares what the budget counts for a tenant with the
 * bytes read back from its runs' keys (storedRunBytes), so a kind of data the scripts forget shows up as a gap.
 */
describe('storage accounting: every byte a run keeps is charged', () => {
  let env: TestEnv;
  let budget: StorageBudget;
  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_TENANT_MAX_BYTES: String(60_000) } });
    budget = new StorageBudget(env.client.store.redis, env.client.store.keys, {
      defaultMaxBytes: env.config.tenantMaxBytes,
      retentionSeconds: env.config.retentionSeconds,
    });
  });
  afterAll(async () => env?.close());

  const stored = (runId: string) => storedRunBytes(env.client.store.redis, env.client.store.keys, runId);
  /** Charged within 3 % (plus a few small meta fields the scripts rewrite in place: status, cursor, times). */
  const expectCharged = (charged: number, bytes: number) => {
    expect(charged).toBeGreaterThanOrEqual(bytes * 0.97 - 400);
    expect(charged).toBeLessThanOrEqual(bytes * 1.03 + 400);
  };
  const chain = async (tenant: string, steps: number) => {
    const run = await env.client.enqueue({ tenant, graph: 'chain', input: { steps, appendMessages: true } });
    const done = await env.client.wait(run.id, { timeoutMs: 60_000 });
    expect(done.status).toBe('completed');
    return done;
  };
  /** `count` turns of a conversation of `tenant`, one after the other, each a chain of `steps` messages; → their ids. */
  const conversation = async (tenant: string, count: number, steps: number) => {
    const turns: string[] = [];
    for (let turn = 0; turn < count; turn += 1) {
      const queued = await env.client.enqueue({
        tenant,
        graph: 'chain',
        input: { steps, appendMessages: true },
        conversationId: 'c1',
      });
      expect((await env.client.wait(queued.id, { timeoutMs: 60_000 })).status).toBe('completed');
      turns.push(queued.id);
    }
    return turns;
  };

  it('is on by default: 1 GiB per tenant', () => {
    expect(testConfig().tenantMaxBytes).toBe(1024 ** 3);
  });

  it("a run's steps, history, state, events, recording and output are charged as stored", async () => {
    const run = await chain('steps', 40);
    const bytes = await stored(run.id);
    // The run keeps far more than its input and output: history, step log, events and recording.
    expect(bytes).toBeGreaterThan(10 * JSON.stringify({ input: { steps: 40 }, output: run.output }).length);
    expectCharged(await budget.usage('steps'), bytes);
  });

  it('a fork is charged its real size: everything it copies', async () => {
    const original = await chain('forks', 40);
    const before = await budget.usage('forks');
    const fork = await env.client.fork(original.id, { from: 38 });
    // The copy is charged as the fork is created, before any step of its own runs.
    const copied = (await budget.usage('forks')) - before;
    const done = await env.client.wait(fork.id, { timeoutMs: 60_000 });
    expect(done.status).toBe('completed');
    const bytes = await stored(fork.id);
    expect(copied).toBeGreaterThan(bytes * 0.8);
    expectCharged((await budget.usage('forks')) - before, bytes);
  });

  it("a conversation's turns store only their own messages: its storage grows linearly, charged as stored", async () => {
    const turns = await conversation('talk', 5, 10);
    const last = turns.at(-1)!;
    // The last turn stores its own ten messages and shows the whole history: the four turns before it, then its own.
    expect(await env.client.store.redis.llen(env.client.store.keys.run(last).messages)).toBe(10);
    const history = await env.client.messages(last);
    expect(history).toHaveLength(50);
    expect(history.slice(0, 40)).toEqual(await env.client.messages(turns[3]!));
    expect((await env.client.store.reads.messageWindow(last, { from: 35, limit: 10 })).items).toEqual(
      history.slice(35, 45),
    );
    expect(await env.client.store.reads.messageWindow(last, { limit: 15 })).toEqual({
      items: history.slice(35),
      from: 35,
      total: 50,
      next: null,
    });
    const cut = await env.client.store.reads.messageWindow(last, { from: 38, limit: 10, maxBytes: 1 });
    expect(cut).toEqual({ items: history.slice(38, 39), from: 38, total: 50, next: 39 });
    // Each turn keeps about as many bytes as the first: the fifth no more than a tenth above it (copying the
    // history made the fifth about a third larger than the first here).
    const perTurn = await Promise.all(turns.map(stored));
    for (const bytes of perTurn.slice(1)) expect(bytes).toBeLessThan(perTurn[0]! * 1.1);
    const bytes = perTurn.reduce((sum, each) => sum + each, 0);
    expectCharged(await budget.usage('talk'), bytes);
  });

  it('an earlier turn a later one refers to is kept, forks of the later one copy the whole history, and purge goes newest first', async () => {
    const turns = await conversation('kept', 2, 4);
    const [first, second] = turns as [string, string];
    // Taking the second turn in kept the first past its own retention: twice the period from then.
    expect(await env.client.store.redis.ttl(env.client.store.keys.run(first).messages)).toBeGreaterThan(
      env.config.retentionSeconds,
    );
    // The end of a turn keeps the earlier ones as long as the turn itself (the run-finished hook calls this).
    const { redis, keys } = env.client.store;
    // In one MULTI: the turn's own run-finished hook may run keepEarlier at any moment, and must see the
    // first turn's keys all shortened or none (it reads the meta key's TTL for all of them).
    const shorten = redis.multi();
    for (const key of keys.runAll(first)) shorten.expire(key, 60);
    await shorten.exec();
    await env.client.store.reads.history.keepEarlier(second);
    for (const key of [keys.run(first).meta, keys.run(first).messages])
      expect(await redis.ttl(key)).toBeGreaterThan(env.config.retentionSeconds - 60);
    const history = await env.client.messages(second);
    expect(history).toHaveLength(8);
    const fork = await env.client.fork(second, { from: 2 });
    const forked = await env.client.store.reads.messages(fork.id);
    // The fork holds its own copy: the first turn's four messages, then the second's two before its step 2.
    expect(await env.client.store.redis.llen(env.client.store.keys.run(fork.id).messages)).toBe(forked.length);
    expect(forked).toEqual(history.slice(0, 6));
    expect((await env.client.wait(fork.id, { timeoutMs: 60_000 })).status).toBe('completed');
    await expect(env.client.purge(first)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await env.client.messages(second)).toEqual(history);
    await env.client.purge(second);
    await env.client.purge(first);
    expect(await env.client.store.reads.get(first)).toBeNull();
  });

  it('a purged run gives its bytes back; a tenant over its budget cannot start another run, however small', async () => {
    const run = await chain('full', 40);
    const bytes = await stored(run.id);
    const next = await chain('full', 80);
    expectCharged(await budget.usage('full'), bytes + (await stored(next.id)));
    // 60 kB: the two runs above keep more, though their inputs were a few bytes each.
    expect(await budget.usage('full')).toBeGreaterThan(60_000);
    await expect(env.client.enqueue({ tenant: 'full', graph: 'chain', input: { steps: 1 } })).rejects.toMatchObject({
      code: 'STORAGE_BUDGET_EXCEEDED',
      retryable: true,
    });
    await env.client.purge(next.id);
    expectCharged(await budget.runBytes('full'), bytes);
    const admitted = await env.client.enqueue({ tenant: 'full', graph: 'chain', input: { steps: 1 } });
    expect((await env.client.wait(admitted.id, { timeoutMs: 30_000 })).status).toBe('completed');
  });
});
