import { afterAll, describe, expect, it, vi } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { PaidClaims } from '../../worker/engine/paid-claims.js';
import { singleStepCommit } from '../helpers/single-step-commit.js';
import { testConfig } from '../helpers/test-env.js';

/** The claim script's answers, on a real Redis, with liveness keys set by hand. */
describe('claims on paid work', () => {
  const config = testConfig();
  const client = new AgentClient({ config });
  afterAll(async () => client.close());

  async function runAtSuperstep0(id: string) {
    await client.get('none'); // connects the client's Redis (the store does not wait for it)
    const { store } = client;
    await store.creation.create({ id, tenant: 'default', graph: 'chain', input: {}, maxSteps: 10, now: Date.now() });
    await store.creation.admit(id, '1', {}, [{ node: 'step' }], Date.now());
    await store.commits.begin(id, 0, 0, {}, Date.now());
    return store;
  }
  const claimsOf = (processId: string, { pauseMs }: { pauseMs?: number } = {}) =>
    new PaidClaims({
      redis: client.store.redis,
      keys: client.store.keys,
      processId,
      logger: createLogger('silent'),
      pollMs: 20,
      ...(pauseMs === undefined ? {} : { pauseMs }),
    });
  /** Claims step s0.t0's `model` call of `runId` (its claim runs out in `endsInMs`). */
  const claimModel = (claims: PaidClaims, runId: string, { attempt = 1, endsInMs = 60_000 } = {}) =>
    claims.acquire({
      runId,
      superstep: 0,
      task: 0,
      key: 'model',
      attempt,
      endsAt: Date.now() + endsInMs,
      signal: new AbortController().signal,
    });
  const alive = (processId: string, ms = 5000) =>
    client.store.redis.set(`${client.store.keys.alivePrefix(0)}${processId}`, '1', 'PX', ms);

  it('a second delivery waits while the owner lives, then uses what the owner saved', async () => {
    const runId = `claims-wait-${Date.now()}`;
    await runAtSuperstep0(runId);
    await alive('proc-a');
    const a = claimsOf('proc-a');
    const held = await claimModel(a, runId);
    expect(held.kind).toBe('claimed');
    const waiting = claimModel(claimsOf('proc-b'), runId);
    await new Promise((resolve) => setTimeout(resolve, 150));
    if (held.kind !== 'claimed') throw new Error('unreachable');
    await a.save(runId, 's0.t0', { model: { text: 'paid' } }, held);
    expect(await waiting).toEqual({ kind: 'memo', value: { text: 'paid' } });
    // The claim ended with the save.
    expect(await client.store.redis.hkeys(client.store.keys.run(runId).memo)).toEqual(['s0.t0']);
  });

  it("a second delivery whose clock runs 15 minutes ahead still waits for a live owner's claim (times are Redis's)", async () => {
    const runId = `claims-skew-${Date.now()}`;
    await runAtSuperstep0(runId);
    await alive('proc-a');
    const a = claimsOf('proc-a');
    const held = await claimModel(a, runId);
    if (held.kind !== 'claimed') throw new Error(`proc-a did not claim: ${held.kind}`);
    const realNow = Date.now.bind(Date);
    const skew = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 15 * 60_000);
    try {
      // Judged by its own clock, proc-a's claim (60 s) ran out long ago: the old script took it over.
      const waiting = claimModel(claimsOf('proc-b'), runId);
      const early = await Promise.race([waiting, new Promise((resolve) => setTimeout(() => resolve('waiting'), 300))]);
      expect(early).toBe('waiting');
      await a.save(runId, 's0.t0', { model: { text: 'paid once' } }, held);
      expect(await waiting).toEqual({ kind: 'memo', value: { text: 'paid once' } });
    } finally {
      skew.mockRestore();
    }
  });

  it("the last look before paying is the claim's own while it is younger than a lease, and a look of its own once older", async () => {
    const runId = `claims-confirm-${Date.now()}`;
    await runAtSuperstep0(runId);
    await alive('proc-a');
    const claims = claimsOf('proc-a', { pauseMs: 300 });
    const held = await claimModel(claims, runId);
    if (held.kind !== 'claimed') throw new Error(`expected a claim, got ${held.kind}`);
    // Taken over behind the claim's back (as after a pause): a look now would say 'lost'.
    await client.store.redis.hset(
      client.store.keys.run(runId).memo,
      held.field,
      JSON.stringify({ owner: 'proc-b/1', attempt: 2, endsAt: Date.now() + 60_000 }),
    );
    // The claim was looked at less than a lease ago: that look stands, no round trip.
    await expect(claims.confirm(runId, 0, 0, held)).resolves.toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 350));
    // Older than a lease: looked at again, and the takeover is seen.
    await expect(claims.confirm(runId, 0, 0, held)).rejects.toMatchObject({ kind: 'stale' });
  });

  it('takes over when the owner stops beating', async () => {
    const runId = `claims-dead-${Date.now()}`;
    await runAtSuperstep0(runId);
    await alive('proc-dead', 300);
    await claimModel(claimsOf('proc-dead'), runId);
    const taken = await claimModel(claimsOf('proc-b'), runId, { attempt: 2 });
    expect(taken.kind).toBe('claimed');
    // It waited for the owner's liveness key to lapse.
    expect(await client.store.redis.exists(`${client.store.keys.alivePrefix(0)}proc-dead`)).toBe(0);
  });

  it('takes over a claim that ran out (a hung call), even from a live owner', async () => {
    const runId = `claims-hung-${Date.now()}`;
    await runAtSuperstep0(runId);
    await alive('proc-hung');
    await claimModel(claimsOf('proc-hung'), runId, { endsInMs: 100 });
    const taken = await claimModel(claimsOf('proc-b'), runId);
    expect(taken.kind).toBe('claimed');
  });

  it("a commit drops the step's memo field, unless the step says it had no memos (then a duplicate delivery's memo is left to expire with the run)", async () => {
    const commit = async (runId: string, memos?: boolean) => {
      const store = await runAtSuperstep0(runId);
      await store.commits.memoPut(runId, 's0.t0', { model: { text: 'paid' } });
      const committed = await store.commits.commit(
        singleStepCommit({ runId, ...(memos === undefined ? {} : { memos }) }),
        Date.now(),
      );
      expect(committed.kind).toBe('advanced');
      return client.store.redis.hkeys(client.store.keys.run(runId).memo);
    };
    expect(await commit(`claims-memo-drop-${Date.now()}`)).toEqual([]);
    expect(await commit(`claims-memo-none-${Date.now()}`, false)).toEqual(['s0.t0']);
  });

  it('a delivery that reaches its paid call after the step was committed stops: stale, no claim', async () => {
    const runId = `claims-stale-${Date.now()}`;
    const store = await runAtSuperstep0(runId);
    const committed = await store.commits.commit(singleStepCommit({ runId }), Date.now());
    expect(committed.kind).toBe('advanced');
    await alive('proc-late');
    const late = await claimModel(claimsOf('proc-late'), runId);
    expect(late).toEqual({ kind: 'stale' });
    expect(await client.store.redis.hlen(client.store.keys.run(runId).memo)).toBe(0);
  });
});
