import { describe, expect, it } from 'vitest';
import { TurnGate } from '../../worker/runtime/turn-gate.js';

/** The gate that spreads a burst of step starts over event-loop turns. */
describe('TurnGate', () => {
  it('lets perTurn callers through per turn, in order, with timers running between turns', async () => {
    const gate = new TurnGate(3);
    const passed: number[] = [];
    const timerFiredAfter: number[] = [];
    // A timer due now: it must run before the burst has all gone through.
    setTimeout(() => timerFiredAfter.push(passed.length), 0);
    const all = Array.from({ length: 3000 }, async (_value, index) => {
      const turn = gate.pass();
      if (turn) await turn;
      passed.push(index);
    });
    // The first three pass at once (no wait), the rest queue.
    await Promise.resolve();
    expect(passed).toEqual([0, 1, 2]);
    expect(gate.queued).toBe(2997);
    await Promise.all(all);
    expect(passed).toEqual(Array.from({ length: 3000 }, (_value, index) => index));
    // 1,000 turns: the timer got its turn long before the burst was through.
    expect(timerFiredAfter).toHaveLength(1);
    expect(timerFiredAfter[0]).toBeLessThan(3000);
  });

  it('passes at once while nothing waits and the turn has room', () => {
    const gate = new TurnGate(2);
    expect(gate.pass()).toBeUndefined();
    expect(gate.pass()).toBeUndefined();
    expect(gate.pass()).toBeInstanceOf(Promise);
  });

  it('counts every caller, let through at once or queued (a worker looks whether it is idle by it)', async () => {
    const gate = new TurnGate(1);
    expect(gate.arrivals).toBe(0);
    await Promise.all([gate.through(async () => 1), gate.through(async () => 2), gate.pass()]);
    expect(gate.arrivals).toBe(3);
  });
});
