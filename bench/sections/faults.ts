/**
 * `npm run bench -- --only faults`: what faults cost, with real worker processes, a real
 * redis-server of its own per scenario and model calls counted on the scripted server
 * (test/chaos/fault-scenarios.ts, test/chaos/intake-fault-scenarios.ts — the chaos tests assert the same
 * scenarios). Figures, by scenario:
 * - Redis full (maxmemory, noeviction) for 15 s under 40 model-calling runs: `full_runs_stalled_over_30s`,
 *   `full_model_calls_paid_twice`, `full_step_attempts_spent` (goals 0), `full_all_finished_after_redis_roomy_s`,
 *   `full_producer_got_redis_full`, `full_warning_lines_per_worker_per_s`;
 * - SIGSTOP 10 s of a worker with 8 calls in flight, at the default takeover wait (0) and at one longer
 *   than the pause: `pause_calls_sent_by_paused_worker_after_resume` (goal 0), `pause_model_calls_paid_twice`;
 *   and the other side of the trade, kill -9 of such a worker at both waits:
 *   `kill_inflight_steps_committed_after_s` (how long a dead worker's paid steps wait);
 * - 3 raw jobs of 20 MB beside 30 good runs: `poison_good_runs_slowdown` (goal ≤ 1.5), `poison_max_times_taken` (1);
 * - a run for `chain@9`: `unserved_version_failed_after_s` against `unserved_wait_ms`;
 * - SIGTERM as Redis is killed: `stop_without_redis_exit_s` against grace + release (4 s here).
 * `--quick` runs smaller and shorter versions (to check the section works, not to quote).
 */
import { pausedWorkerScenario, redisFullScenario, type Figures } from '../../test/chaos/fault-scenarios.js';
import {
  poisonIntakeScenario,
  stopWithoutRedisScenario,
  unservedVersionScenario,
} from '../../test/chaos/intake-fault-scenarios.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';

export const faultsSection: BenchSection = {
  name: 'faults',
  async run({ quick, log }: BenchContext): Promise<BenchFigures> {
    const figures: Figures = {};
    const add = (scenario: string, more: Figures, suffix = '') => {
      for (const [name, value] of Object.entries(more)) figures[`${name}${suffix}`] = value;
      log(`${scenario}: ${JSON.stringify(more)}`);
    };
    const full = await redisFullScenario({ runs: quick ? 12 : 40, fullMs: quick ? 5000 : 15_000, log });
    add('redis full', full.figures);
    const pauseMs = quick ? 6000 : 10_000;
    const longWait = pauseMs + 5000;
    add('paused, takeover 0', await pausedWorkerScenario({ pauseMs, takeoverMs: 0, log }));
    add('paused, takeover > pause', await pausedWorkerScenario({ pauseMs, takeoverMs: longWait, log }), '_long_wait');
    add('killed, takeover 0', await pausedWorkerScenario({ kill: true, takeoverMs: 0, log }));
    add(
      'killed, takeover > pause',
      await pausedWorkerScenario({ kill: true, takeoverMs: longWait, log }),
      '_long_wait',
    );
    add('poison intake', await poisonIntakeScenario({ good: 30, poison: quick ? 1 : 3, log }));
    add('unserved version', await unservedVersionScenario({ waitMs: 3000 }));
    add('stop without Redis', await stopWithoutRedisScenario());
    return figures;
  },
};
