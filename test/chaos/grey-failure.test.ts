import { describe, expect, it } from 'vitest';
import { recordFigure } from '../helpers/suite-figures.js';
import { suiteSeed } from '../helpers/suite-scale.js';
import { testConfig } from '../helpers/test-env.js';
import { runGreyFailure } from './grey-failure-scenario.js';

const SCENARIO = 'grey failure';
const RUNS = 8;
const STEPS = 4;

/**
 * A worker whose data connections to Redis go silent while its liveness connection keeps beating must
 * not hold its runs: it stops beating, its peer takes every stuck run over, and when the silence ends its
 * held commands commit nothing twice (the fences) and no paid call was made twice.
 */
describe('chaos: a grey failure of a worker’s data connections', () => {
  it(`${RUNS} runs in flight on a worker whose data connections go silent: a peer finishes them all, nothing twice`, async () => {
    const seed = suiteSeed();
    const lines: string[] = [];
    const outcome = await runGreyFailure({
      config: testConfig({ AGENTQ_WORKER_CONCURRENCY: String(RUNS) }),
      runs: RUNS,
      steps: STEPS,
      silenceMs: 60_000,
      seed,
      onSilencedLog: (text) => lines.push(text),
    });
    recordFigure({ scenario: SCENARIO, name: 'runs_stuck', value: outcome.stuck, goal: '= 0' });
    if (outcome.takeoverMs !== undefined)
      recordFigure({ scenario: SCENARIO, name: 'takeover_seconds', value: outcome.takeoverMs / 1000 });
    expect(outcome.stuck, 'runs still going when the 60 s silence ended').toBe(0);
    expect(outcome.problems).toEqual([]);
    expect(outcome.records.map((record) => record.status)).toEqual(Array(RUNS).fill('completed'));
    expect(outcome.committedTwice).toBe(0);
    expect(outcome.paidTwice).toBe(0);
    // One line when it stopped beating and one when it beat again.
    const log = lines.join('');
    expect(log.match(/it stops beating/g)?.length).toBe(1);
    expect(log.match(/it beats again/g)?.length).toBe(1);
  }, 240_000);
});
