import { describe, expect, it } from 'vitest';
import { withinShare, type SlotOffer } from '../../shared/operations/batches/slot-offer.js';
import { ActiveSteps } from '../../worker/engine/active-steps.js';
import { EagerStarts } from '../../worker/engine/eager-starts.js';
import { StepAbortHandle } from '../../worker/engine/step-abort.js';
import type { FinishingJob } from '../../worker/engine/step-transitions.js';

const slot: SlotOffer['slot'] = { token: 't', lockDurationMs: 1000, workerName: 'w', queuePrefix: 'q' };

function finishing(): FinishingJob {
  return { id: 'j', token: 't', attempts: 1, attemptsMade: 0, fetchNext: true, eager: true, returnValue: '' };
}

describe('a batch slot is taken only within its worker’s share', () => {
  it('takes the question while the worker holds less than the concurrency split over the workers alive', () => {
    expect(withinShare({ slot }, 20)).toBe(true);
    expect(withinShare({ slot, share: { held: 30, workers: 1 } }, 20)).toBe(true);
    expect(withinShare({ slot, share: { held: 9, workers: 2 } }, 20)).toBe(true);
    expect(withinShare({ slot, share: { held: 10, workers: 2 } }, 20)).toBe(false);
    // An uneven split rounds up: 3 workers share 20 slots as 7, 7, 6.
    expect(withinShare({ slot, share: { held: 6, workers: 3 } }, 20)).toBe(true);
    expect(withinShare({ slot, share: { held: 7, workers: 3 } }, 20)).toBe(false);
  });

  it("counts the worker's other running runs of the same batch, not the finishing one's, nor another batch's", async () => {
    const active = new ActiveSteps();
    for (const runId of ['bat_a.i1', 'bat_a.i2', 'bat_a.i3', 'bat_ab.i1', 'bat_b.i1', 'run_x'])
      active.add(runId, new StepAbortHandle());
    let reads = 0;
    const starts = new EagerStarts({
      lockDurationMs: 1000,
      eagerHops: 5,
      queuePrefixOf: () => 'q',
      activeSteps: active,
      countWorkers: async () => {
        reads += 1;
        return 2;
      },
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(starts.offer('bat_a.i3', finishing(), true)).toBeDefined();
    expect(starts.offerOf('bat_a.i3')?.share).toEqual({ held: 2, workers: 2 });
    // The count of workers is read once, then kept for a while.
    expect(starts.offer('bat_b.i1', finishing(), true)).toBeDefined();
    expect(starts.offerOf('bat_b.i1')?.share).toEqual({ held: 0, workers: 2 });
    expect(reads).toBe(1);
  });

  it('keeps no share before the count of workers is known, or when it cannot be read', async () => {
    const starts = new EagerStarts({
      lockDurationMs: 1000,
      eagerHops: 5,
      queuePrefixOf: () => 'q',
      activeSteps: new ActiveSteps(),
      countWorkers: () => Promise.reject(new Error('redis down')),
    });
    await new Promise((resolve) => setImmediate(resolve));
    starts.offer('bat_a.i1', finishing(), true);
    expect(starts.offerOf('bat_a.i1')?.share).toBeUndefined();
  });
});
