import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { commitCarrying, HeldSave, type CarriedSave } from '../../worker/engine/held-save.js';

const carried: CarriedSave = { field: 'claim:s0.t0:model', claimant: 'p/1', record: ['k:s0.t0:model', '{}', 0] };

/**
 * A paid result held for the step's commit to carry (the engine's side is tested with Redis in
 * test/integration/carried-save.test.ts): carried only while its save has not been sent, sent on its own at
 * the end of the turn, before the node's next paid call, or after a carrying commit that failed.
 */
describe('HeldSave', () => {
  it('is carried by a commit made within the turn: its save is never sent on its own', async () => {
    const held = new HeldSave();
    const send = vi.fn(async () => undefined);
    held.hold(send, carried);
    const ended = vi.fn();
    const result = await commitCarrying(held, async (carriedSave) => ({ carriedSave }), ended);
    expect(result).toEqual({ carriedSave: carried });
    expect(ended).toHaveBeenCalledWith('p/1');
    await nextTurn();
    expect(send).not.toHaveBeenCalled();
  });

  it('is sent at the end of the turn when the node waits on something, and a commit after it carries nothing', async () => {
    const held = new HeldSave();
    const send = vi.fn(async () => 'ok');
    held.hold(send, carried);
    await nextTurn();
    expect(send).toHaveBeenCalledTimes(1);
    expect(held.take()).toBeUndefined();
    const commit = vi.fn(async (carriedSave: CarriedSave | undefined) => carriedSave);
    expect(await commitCarrying(held, commit, () => undefined)).toBeUndefined();
    expect(send).toHaveBeenCalledTimes(1);
  });

  it('is sent before the next paid call (flush), once, and waited for', async () => {
    const held = new HeldSave();
    let landed = false;
    const send = vi.fn(async () => {
      await nextTurn();
      landed = true;
    });
    held.hold(send, carried);
    await held.flush();
    expect(landed).toBe(true);
    await held.flush();
    await nextTurn();
    expect(send).toHaveBeenCalledTimes(1);
  });

  it("a save sent at the turn's end that failed fails the step where it is waited for, and is no unhandled rejection", async () => {
    const held = new HeldSave();
    held.hold(async () => Promise.reject(new Error('Redis refused')), carried);
    await nextTurn();
    await expect(held.settleSent()).rejects.toThrow('Redis refused');
    await expect(held.flush()).rejects.toThrow('Redis refused');
  });

  it('a carrying commit that failed sends the save on its own, then fails as the commit did', async () => {
    const held = new HeldSave();
    const send = vi.fn(async () => undefined);
    held.hold(send, carried);
    const ended = vi.fn();
    await expect(commitCarrying(held, async () => Promise.reject(new Error('connection lost')), ended)).rejects.toThrow(
      'connection lost',
    );
    expect(send).toHaveBeenCalledTimes(1);
    expect(ended).not.toHaveBeenCalled();
  });

  it('nothing held: the commit carries nothing and nothing is sent', async () => {
    const held = new HeldSave();
    expect(
      await commitCarrying(
        held,
        async (carriedSave) => carriedSave ?? 'none',
        () => undefined,
      ),
    ).toBe('none');
    expect(
      await commitCarrying(
        undefined,
        async (carriedSave) => carriedSave ?? 'none',
        () => undefined,
      ),
    ).toBe('none');
  });
});
