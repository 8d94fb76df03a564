import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadWhenIdle } from '../../worker/runtime/load-when-idle.js';

/** A load left for a quiet moment: the tokenizer, not loaded while a worker's first steps run. */
describe('loadWhenIdle', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('loads once two looks in a row found the process idle, and only once', async () => {
    let busy = true;
    const load = vi.fn(async () => undefined);
    loadWhenIdle({ busy: () => busy, load, onError: () => undefined, pollMs: 100 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(load).not.toHaveBeenCalled();
    busy = false;
    await vi.advanceTimersByTimeAsync(100);
    // One idle look is a gap between steps, not a quiet process.
    expect(load).not.toHaveBeenCalled();
    busy = true;
    await vi.advanceTimersByTimeAsync(100);
    busy = false;
    await vi.advanceTimersByTimeAsync(100);
    expect(load).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(100);
    expect(load).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('never loads once stopped (the worker closed first), and reports a failed load', async () => {
    const stopped = vi.fn(async () => undefined);
    loadWhenIdle({ busy: () => false, load: stopped, onError: () => undefined, pollMs: 100 }).stop();
    const errors: unknown[] = [];
    loadWhenIdle({
      busy: () => false,
      load: () => Promise.reject(new Error('no tokenizer')),
      onError: (error) => errors.push(error),
      pollMs: 100,
    });
    await vi.advanceTimersByTimeAsync(500);
    expect(stopped).not.toHaveBeenCalled();
    expect(errors).toEqual([new Error('no tokenizer')]);
  });
});
