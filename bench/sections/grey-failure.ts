/**
 * A grey failure (test/chaos/grey-failure-scenario.ts, which the chaos test asserts): 8 model-calling
 * runs in flight on a worker whose data connections to Redis go silent (sockets open, nothing answered)
 * while its liveness connection keeps beating; a second worker on Redis directly. The silence lasts until
 * every run has ended, or 60 s. Figures: `grey_runs_stuck` (runs not finished when the silence ended,
 * goal 0), `grey_takeover_s` (from the silence to the last run's end; -1 when some run was stuck),
 * `grey_steps_committed_twice` and `grey_model_calls_paid_twice` (goals 0). `--quick`: 4 runs, 30 s.
 */
import { loadConfig } from '../../shared/config/config.js';
import { runGreyFailure } from '../../test/chaos/grey-failure-scenario.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { round } from '../lib/stats.js';

export const greyFailureSection: BenchSection = {
  name: 'grey-failure',
  async run({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
    const runs = quick ? 4 : 8;
    const id = Date.now().toString(36);
    const config = loadConfig({
      REDIS_URL: redisUrl,
      AGENTQ_KEY_PREFIX: `grey${id}`,
      AGENTQ_QUEUE_PREFIX: `qgrey${id}`,
      AGENTQ_WORKER_CONCURRENCY: String(runs),
      EMBED_PROVIDER: 'none',
    });
    const outcome = await runGreyFailure({ config, runs, steps: 4, silenceMs: quick ? 30_000 : 60_000, seed: 1 });
    const figures: BenchFigures = {
      grey_runs: runs,
      grey_runs_stuck: outcome.stuck,
      grey_takeover_s: outcome.takeoverMs === undefined ? -1 : round(outcome.takeoverMs / 1000),
      grey_steps_committed_twice: outcome.committedTwice,
      grey_model_calls_paid_twice: outcome.paidTwice,
      grey_runs_completed: outcome.records.filter((record) => record.status === 'completed').length,
    };
    log(`grey failure: ${JSON.stringify(figures)}`);
    return figures;
  },
};
