/**
 * `npm run bench` section "recovery": how soon a step interrupted by a killed worker runs
 * again. Two worker processes run `model-chain` runs (bench/workers/capacity-worker.ts) whose steps each
 * make one model call that the scripted server answers after 3 s; one of them is SIGKILLed
 * mid-step, again and again (alternating), and restarted at once. For every step that was running in
 * the killed process, the time from the kill to that step's next `step-start` event (the stream id's
 * millisecond time, Redis's clock on this machine) is one sample.
 *
 * "At the tuned settings" means the config's defaults, read from `loadConfig` and printed:
 * AGENTQ_LOCK_DURATION_MS (3 s) and AGENTQ_STALLED_INTERVAL_MS (1 s). BullMQ takes a killed job back
 * after its lock expired and a stall check saw it twice, so a sample lands between about
 * lock + 1 × interval and lock + 2 × interval. The surviving worker has free slots, so it picks the
 * step up (the restarted one may too).
 *
 * Figures: `recovery_p95_s` (goal ≤ 10), `recovery_p50_s`, `recovery_max_s`, `recovery_samples`,
 * `recovery_lost_steps` (interrupted steps that never started again within 60 s: must be 0), the
 * settings used, `recovery_lock_duration_s` and `recovery_stalled_interval_s`, and
 * `recovery_duplicate_model_calls`: model calls answered more than once for the same step. A call cut
 * off by the kill (its answer never arrived, so never saved) is made again by design (a paid call is saved before it is
 * acted on, so one cut off before its save is asked again) and counted apart, as `recovery_calls_cut_by_kills` (with
 * the calls cut when the benchmark stops its workers).
 */
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { startScriptedOpenAIServer } from '../../test/fakes/scripted-openai-server.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { forkBenchWorker, type BenchWorker } from '../lib/bench-worker-process.js';
import { benchEnv, enqueueAll, waitFor } from '../lib/bench-runs.js';
import { percentile, round } from '../lib/stats.js';

const STEP_MS = 3000;
/** Runs kept in flight: 4 per worker, so either worker alone (concurrency 8) can take all their steps. */
const IN_FLIGHT = 8;
const LOST_AFTER_MS = 60_000;

export const recoverySection: BenchSection = {
  name: 'recovery',
  async run({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
    const kills = quick ? 3 : 12;
    const model = await startScriptedOpenAIServer({ script: () => ({ content: 'ok', delayMs: STEP_MS }) });
    const env = benchEnv(redisUrl, {
      AGENTQ_WORKER_CONCURRENCY: '8',
      LLM_MODEL: 'scripted-chat',
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'bench',
    });
    const config = loadConfig(env);
    log(
      `recovery: ${kills} kills; lockDuration ${config.lockDurationMs} ms, stalledInterval ${config.stalledIntervalMs} ms, maxStalledCount ${config.maxStalledCount}`,
    );
    const client = new AgentClient({ config });
    const workers: BenchWorker[] = [];
    const unfinished = new Set<string>();
    const track = (worker: BenchWorker) => worker.onFinished((runId) => unfinished.delete(runId));
    try {
      workers.push(...(await Promise.all([forkBenchWorker(env), forkBenchWorker(env)])));
      workers.forEach(track);
      const samples: number[] = [];
      let lost = 0;
      for (let kill = 0; kill < kills; kill += 1) {
        await topUp(client, unfinished);
        const victim = kill % 2;
        let running: { runId: string; superstep: number }[] = [];
        await waitFor(
          async () => (running = (await workers[victim]!.stats()).running).length > 0,
          60_000,
          `worker ${victim} to run a step`,
          log,
        );
        // Somewhere in the middle of the steps it runs, not always at their start.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * STEP_MS * 0.5));
        running = (await workers[victim]!.stats()).running;
        const killedAt = Date.now();
        await workers[victim]!.kill();
        const restarted = forkBenchWorker(env).then((worker) => {
          track(worker);
          return (workers[victim] = worker);
        });
        // Awaited below; until then a failed start must not surface as an unhandled rejection.
        restarted.catch(() => undefined);
        const times = await Promise.all(running.map((step) => restartDelay(client, step, killedAt)));
        await restarted;
        const measured = times.filter((time): time is number => time !== undefined && time >= 0);
        lost += times.filter((time) => time === undefined).length;
        samples.push(...measured);
        log(
          `recovery: kill ${kill + 1}/${kills} (worker ${victim}, ${running.length} steps): ${measured.map((ms) => round(ms / 1000, 2)).join(', ')} s`,
        );
      }
      // Each prompt names `<runId> <stepId>`: answers per step beyond one were paid twice.
      const answered = new Map<string, number>();
      let cut = 0;
      for (const request of model.chatRequests()) {
        if (request.outcome !== 'answered') {
          cut += 1;
          continue;
        }
        const step = /\((\S+ \S+) attempt/.exec(JSON.stringify(request.body))?.[1] ?? 'unknown';
        answered.set(step, (answered.get(step) ?? 0) + 1);
      }
      const duplicates = [...answered.values()].reduce((sum, count) => sum + Math.max(0, count - 1), 0);
      return {
        recovery_duplicate_model_calls: duplicates,
        recovery_calls_cut_by_kills: cut,
        recovery_p95_s: round(percentile(samples, 95) / 1000, 2),
        recovery_p50_s: round(percentile(samples, 50) / 1000, 2),
        recovery_max_s: round(Math.max(...samples) / 1000, 2),
        recovery_samples: samples.length,
        recovery_lost_steps: lost,
        recovery_lock_duration_s: config.lockDurationMs / 1000,
        recovery_stalled_interval_s: config.stalledIntervalMs / 1000,
      };
    } finally {
      await Promise.all(workers.map((worker) => worker.kill()));
      // Leave nothing running on the shared Redis: cancel what is still in flight (best effort).
      await Promise.all([...unfinished].map((runId) => client.cancel(runId).catch(() => undefined)));
      await client.close();
      await model.close();
    }
  },
};

/** Keeps IN_FLIGHT long model-chain runs going. */
async function topUp(client: AgentClient, unfinished: Set<string>): Promise<void> {
  const missing = IN_FLIGHT - unfinished.size;
  if (missing <= 0) return;
  for (const id of await enqueueAll(client, missing, () => ({ graph: 'model-chain', input: { steps: 40 } })))
    unfinished.add(id);
}

/**
 * ms from the kill to the step's next start; -1 when it had committed before the kill (no sample);
 * undefined when it did not start again within LOST_AFTER_MS.
 */
async function restartDelay(
  client: AgentClient,
  step: { runId: string; superstep: number },
  killedAt: number,
): Promise<number | undefined> {
  const deadline = killedAt + LOST_AFTER_MS;
  while (Date.now() < deadline) {
    const events = await client.store.eventLog.events(step.runId, { count: 10_000 });
    for (const event of events) {
      if (Number(event.data.superstep) !== step.superstep) continue;
      const at = Number(event.id.split('-')[0]);
      if (event.type === 'step-end' && at <= killedAt) return -1;
      if (event.type === 'step-start' && at > killedAt) return at - killedAt;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}
