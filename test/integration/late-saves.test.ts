import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { CANCELLED_ERROR } from '../../shared/store/run-scripts.js';
import { recordCallArgs } from '../../shared/store/recordings/run-recordings.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { PaidClaims } from '../../worker/engine/paid-claims.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * Writes that come after their run ended — a paused or cut-off worker's late save of a paid result, its
 * usage, its events — on a real Redis: refused once the run is finished or gone, so no key of the run is
 * made again without a TTL (retention would never remove it).
 */
describe('late writes to a finished run', () => {
  const config = testConfig();
  const client = new AgentClient({ config });
  afterAll(async () => client.close());
  const { store } = client;

  async function runAtSuperstep0(id: string) {
    await client.get('none'); // connects the client's Redis (the store does not wait for it)
    await store.creation.create({ id, tenant: 'default', graph: 'chain', input: {}, maxSteps: 10, now: Date.now() });
    await store.creation.admit(id, '1', {}, [{ node: 'step' }], Date.now());
    await store.commits.begin(id, 0, 0, {}, Date.now());
  }
  const claims = new PaidClaims({
    redis: store.redis,
    keys: store.keys,
    processId: 'proc-late',
    logger: createLogger('silent'),
  });
  async function claimModel(runId: string) {
    const held = await claims.acquire({
      runId,
      superstep: 0,
      task: 0,
      key: 'model',
      attempt: 1,
      endsAt: Date.now() + 60_000,
      signal: new AbortController().signal,
    });
    if (held.kind !== 'claimed') throw new Error(`expected a claim, got ${held.kind}`);
    return held;
  }
  const record = (runId: string) =>
    recordCallArgs({ stepId: 's0.t0', key: 'model', node: 'step', request: { runId }, response: { text: 'late' } });
  /** The run's keys that exist, each with its TTL (-1: none). */
  async function keysLeft(runId: string): Promise<Record<string, number>> {
    const left: Record<string, number> = {};
    for (const key of store.keys.runAll(runId))
      if (await store.redis.exists(key)) left[key] = await store.redis.ttl(key);
    return left;
  }
  /** What retention does to a finished run: every key of it gone. */
  const expire = (runId: string) => store.redis.del(...store.keys.runAll(runId));
  const cancel = (runId: string) => store.lifecycle.finish(runId, 'cancelled', CANCELLED_ERROR, Date.now());

  for (const recorded of [false, true])
    it(`a paid result saved after the run expired is refused and writes nothing (${recorded ? 'with its recording' : 'memo only'})`, async () => {
      const runId = `late-expired-${recorded ? 'rec' : 'memo'}-${Date.now()}`;
      await runAtSuperstep0(runId);
      const held = await claimModel(runId);
      expect(await cancel(runId)).toBe('ok');
      await expire(runId);
      await expect(
        claims.save(runId, 's0.t0', { model: { text: 'late' } }, held, 'model', recorded ? record(runId) : undefined),
      ).rejects.toMatchObject({ kind: 'stale' });
      expect(await keysLeft(runId)).toEqual({});
      expect(claims.unsavedCount).toBe(0);
    });

  it('a paid result saved after the run finished (its keys still kept) is refused: the memo keeps no field and its TTL', async () => {
    const runId = `late-finished-${Date.now()}`;
    await runAtSuperstep0(runId);
    const held = await claimModel(runId);
    expect(await cancel(runId)).toBe('ok');
    await expect(
      claims.save(runId, 's0.t0', { model: { text: 'late' } }, held, 'model', record(runId)),
    ).rejects.toMatchObject({ kind: 'stale' });
    expect(await store.redis.hexists(store.keys.run(runId).memo, 's0.t0')).toBe(0);
    expect(await store.redis.hexists(store.keys.run(runId).record, 'k:s0.t0:model')).toBe(0);
    for (const [key, ttl] of Object.entries(await keysLeft(runId)))
      expect({ key, ttl: ttl > 0 }).toEqual({ key, ttl: true });
  });

  it('a save while the run is open still lands', async () => {
    const runId = `late-open-${Date.now()}`;
    await runAtSuperstep0(runId);
    const held = await claimModel(runId);
    await claims.save(runId, 's0.t0', { model: { text: 'on time' } }, held, 'model');
    expect(await store.redis.hget(store.keys.run(runId).memo, 's0.t0')).toBe(
      JSON.stringify({ model: { text: 'on time' } }),
    );
    expect(await store.commits.memoPut(runId, 's0.t0', { model: { text: 'again' } })).toBe(true);
  });

  it('a memo, usage or event written after the run expired makes none of its keys again', async () => {
    const runId = `late-writes-${Date.now()}`;
    await runAtSuperstep0(runId);
    expect(await cancel(runId)).toBe('ok');
    await expire(runId);
    expect(await store.commits.memoPut(runId, 's0.t0', { model: { text: 'late' } })).toBe(false);
    await store.commits.addUsage(runId, { inputTokens: 50, outputTokens: 5, costUsd: 0.001 });
    expect(await store.eventLog.addEvent(runId, 'step-retry', { node: 'step' })).toBe(false);
    expect(await keysLeft(runId)).toEqual({});
  });

  it('an event added to a finished run whose stream was trimmed away takes the run’s expiry', async () => {
    const runId = `late-event-${Date.now()}`;
    await runAtSuperstep0(runId);
    expect(await cancel(runId)).toBe('ok');
    await store.redis.del(store.keys.run(runId).events);
    await store.commits.addUsage(runId, { inputTokens: 50, outputTokens: 5, costUsd: 0 });
    expect(await store.eventLog.addEvent(runId, 'step-retry', { node: 'step' })).toBe(true);
    const ttl = await store.redis.ttl(store.keys.run(runId).events);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(await store.redis.ttl(store.keys.run(runId).meta));
    expect(await store.redis.hget(store.keys.run(runId).meta, 'inputTokens')).toBe('50');
  });

  it("a conversation turn's or a replay's note made after the run expired makes no meta again", async () => {
    const runId = `late-note-${Date.now()}`;
    await runAtSuperstep0(runId);
    expect(await store.commits.noteOnMeta(runId, 'turnBehind', 'run_a', Date.now())).toBe(1);
    expect(await store.commits.noteOnMeta(runId, 'turnBehind', 'run_b', Date.now())).toBe(0);
    expect(await store.redis.hget(store.keys.run(runId).meta, 'turnBehind')).toBe('run_a');
    await expire(runId);
    expect(await store.commits.noteOnMeta(runId, 'turnBehind', 'run_a', Date.now())).toBe(-1);
    await store.recordings.noteDivergence(runId, { step: 's0.t0' });
    expect(await keysLeft(runId)).toEqual({});
  });
});
