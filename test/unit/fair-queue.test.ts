import { describe, expect, it } from 'vitest';
import { parseTenantWeights, weightedFairness, weightOf } from '../../shared/config/tenant-weights.js';
import { FAIR_REBASE_AT, FAIR_STRIDE, fairPriorities, type FairState } from '../../shared/store/fair-queue.js';
import { MAX_PRIORITY } from '../../shared/contracts/job-schema.js';

const empty: FairState = { virtual: 0, passes: {} };

/**
 * Serves `jobs` waiting (each {tenant, priority, seq}) as BullMQ would (lowest priority, then FIFO),
 * one at a time, each served job of a backlogged tenant adding that tenant's next job (a run's next step).
 * → how many jobs each tenant had served out of `served`.
 */
function simulate(weights: Record<string, number>, served: number): Record<string, number> {
  let state = empty;
  let seq = 0;
  const queue: { tenant: string; priority: number; seq: number }[] = [];
  const add = (tenant: string) => {
    const head = queue.length ? Math.min(...queue.map((job) => job.priority)) : undefined;
    const decided = fairPriorities(state, {
      tenant,
      weight: weights[tenant]!,
      own: 0,
      count: 1,
      queued: queue.length > 0,
      ...(head === undefined ? {} : { head }),
    });
    state = decided.state;
    queue.push({ tenant, priority: decided.priorities[0]!, seq: seq++ });
  };
  // Each tenant floods: 20 runs, each with one job waiting at a time.
  for (const tenant of Object.keys(weights)) for (let i = 0; i < 20; i++) add(tenant);
  const counts: Record<string, number> = Object.fromEntries(Object.keys(weights).map((tenant) => [tenant, 0]));
  for (let i = 0; i < served; i++) {
    queue.sort((a, b) => a.priority - b.priority || a.seq - b.seq);
    const job = queue.shift()!;
    counts[job.tenant]! += 1;
    add(job.tenant);
  }
  return counts;
}

describe('fairPriorities (the decision lua/fair-pass.lua makes)', () => {
  it('a queue with nothing waiting gives no priority and moves no pass (the lean hop stays)', () => {
    const decided = fairPriorities(empty, { tenant: 'acme', weight: 1, own: 0, count: 2, queued: false });
    expect(decided.priorities).toEqual([0, 0]);
    expect(decided.state).toBe(empty);
  });

  it("moves a tenant's pass by the stride over its weight for each job", () => {
    const first = fairPriorities(empty, { tenant: 'acme', weight: 3, own: 0, count: 3, queued: true });
    expect(first.priorities).toEqual([1, 1 + FAIR_STRIDE / 3, 1 + (2 * FAIR_STRIDE) / 3]);
    expect(first.state.passes.acme).toBe(FAIR_STRIDE);
    const beta = fairPriorities(first.state, { tenant: 'beta', weight: 1, own: 0, count: 2, queued: true });
    expect(beta.priorities).toEqual([1, 1 + FAIR_STRIDE]);
  });

  it('a tenant idle a while starts at the virtual time (the queue head), banking no credit', () => {
    const state: FairState = { virtual: 100, passes: { idle: 5, busy: 9000 } };
    const decided = fairPriorities(state, { tenant: 'idle', weight: 1, own: 0, count: 1, queued: true, head: 5001 });
    expect(decided.priorities).toEqual([5001]);
    expect(decided.state.virtual).toBe(5000);
    expect(decided.state.passes.idle).toBe(5000 + FAIR_STRIDE);
  });

  it("places a run's own priority in strides within its tenant, clamped to BullMQ's range", () => {
    const state: FairState = { virtual: 0, passes: { acme: 600 } };
    const urgent = fairPriorities(state, { tenant: 'acme', weight: 1, own: 0, count: 1, queued: true });
    const later = fairPriorities(state, { tenant: 'acme', weight: 1, own: 2, count: 1, queued: true });
    expect(later.priorities[0]! - urgent.priorities[0]!).toBe(2 * FAIR_STRIDE);
    expect(
      fairPriorities(state, { tenant: 'acme', weight: 1, own: MAX_PRIORITY, count: 1, queued: true }).priorities,
    ).toEqual([MAX_PRIORITY]);
  });

  it('past the rebase point moves everything down by the virtual time and forgets idle tenants', () => {
    const state: FairState = { virtual: FAIR_REBASE_AT + 10, passes: { acme: FAIR_REBASE_AT + 70, old: 3 } };
    const decided = fairPriorities(state, {
      tenant: 'beta',
      weight: 1,
      own: 0,
      count: 1,
      queued: true,
      head: FAIR_REBASE_AT + 11,
    });
    expect(decided.rebased).toBe(FAIR_REBASE_AT + 10);
    expect(decided.priorities).toEqual([1]);
    expect(decided.state).toEqual({ virtual: 0, passes: { acme: 60, beta: FAIR_STRIDE } });
  });

  it('serves backlogged tenants in proportion to their weights', () => {
    const counts = simulate({ acme: 3, beta: 1 }, 400);
    expect(counts.acme! / counts.beta!).toBeCloseTo(3, 0);
    const three = simulate({ a: 1, b: 2, c: 5 }, 800);
    expect(three.c! / three.a!).toBeGreaterThan(4);
    expect(three.c! / three.a!).toBeLessThan(6);
    expect(three.b! / three.a!).toBeCloseTo(2, 0);
  });
});

describe('AGENTQ_TENANT_WEIGHTS', () => {
  it('reads tenant:weight entries, * for every other tenant (1 unless given)', () => {
    const read = parseTenantWeights(' acme:3, beta:0.5 ,*:2');
    if (!('weights' in read)) throw new Error(read.problem);
    expect(weightedFairness(read.weights)).toBe(true);
    expect([weightOf(read.weights, 'acme'), weightOf(read.weights, 'beta'), weightOf(read.weights, 'x')]).toEqual([
      3, 0.5, 2,
    ]);
    const plain = parseTenantWeights('acme:3');
    expect('weights' in plain && weightOf(plain.weights, 'other')).toBe(1);
  });

  it('is off when empty, and on with equal weights for *:1 alone', () => {
    const off = parseTenantWeights('');
    expect('weights' in off && weightedFairness(off.weights)).toBe(false);
    const equal = parseTenantWeights('*:1');
    expect('weights' in equal && weightedFairness(equal.weights)).toBe(true);
  });

  it('refuses an entry without a weight, a weight of 0 or above 1000', () => {
    for (const text of ['acme', 'acme:0', 'acme:-1', 'acme:x', ':3', 'acme:1001'])
      expect(parseTenantWeights(text), text).toHaveProperty('problem');
  });
});
