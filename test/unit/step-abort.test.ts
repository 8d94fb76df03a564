import { describe, expect, it } from 'vitest';
import { StepAbort } from '../../shared/contracts/abort.js';
import { StepAbortHandle } from '../../worker/engine/step-abort.js';

describe('StepAbortHandle', () => {
  it('gives a signal that fires with the reason when the step is aborted', () => {
    const handle = new StepAbortHandle();
    const signal = handle.signal;
    const reasons: unknown[] = [];
    signal.addEventListener('abort', () => reasons.push(signal.reason));
    expect(signal.aborted).toBe(false);
    const reason = new StepAbort('cancel', 'the run was cancelled');
    handle.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(reasons).toEqual([reason]);
    expect(handle.signal).toBe(signal);
  });

  it('gives an aborted signal when asked only after the abort', () => {
    const handle = new StepAbortHandle();
    const reason = new StepAbort('timeout', 'too slow');
    handle.abort(reason);
    expect(handle.signal.aborted).toBe(true);
    expect(handle.signal.reason).toBe(reason);
  });

  it('keeps the first reason', () => {
    const handle = new StepAbortHandle();
    const first = new StepAbort('deadline', 'past the deadline');
    handle.abort(first);
    handle.abort(new StepAbort('shutdown', 'shutting down'));
    expect(handle.reason).toBe(first);
    expect(handle.signal.reason).toBe(first);
  });

  it('races a node: its result when it settles first, the reason as soon as the step is aborted', async () => {
    const done = new StepAbortHandle();
    await expect(done.race(Promise.resolve('result'))).resolves.toBe('result');
    await expect(done.race(Promise.reject(new Error('node failed')))).rejects.toThrow('node failed');

    const hanging = new StepAbortHandle();
    const racing = hanging.race(new Promise(() => undefined));
    const reason = new StepAbort('cancel', 'the run was cancelled');
    hanging.abort(reason);
    await expect(racing).rejects.toBe(reason);

    const before = new StepAbortHandle();
    before.abort(reason);
    await expect(before.race(new Promise(() => undefined))).rejects.toBe(reason);
  });
});
