import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { percentile, round } from '../../bench/lib/stats.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { auditRun, stepKey, type RunAudit } from '../helpers/run-audit.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale, suiteSeed } from '../helpers/suite-scale.js';
import { testConfig } from '../helpers/test-env.js';
import { waitForRuns } from '../helpers/wait-for-runs.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { MODEL_STEPS_GRAPH } from './workers-killed-graph.js';
import { startModelStepsServer, type StepCall } from './workers-killed-model-server.js';
import { MODEL_STEPS_WORKER, modelStepsWorkerEnv } from './workers-killed-worker-env.js';

const SCENARIO = 'workers killed';
const RUNS = atScale(30, 200);
const STEPS = 5;
const WORKERS = 2;
const CONCURRENCY = 4;
/** The 4-8 s between kills at full scale; the fast subset's 30 runs last only seconds, so it kills sooner. */
const KILL_EVERY_MS = atScale<[number, number]>([1000, 2500], [4000, 8000]);

interface Kill {
  pid: number;
  at: number;
}

/**
 * Fault scenario 1 (under SIGKILL: no committed step runs again, no run is lost, every history stays valid, no
 * saved answer is paid for twice): 5-step runs, one model call per step through the
 * real `openai` SDK (scripted latency 50-300 ms), on 2 worker processes × concurrency 4; a random worker
 * is SIGKILLed every few seconds and restarted until every run has finished. The lock and stall
 * settings are the defaults of config.ts, so the kill-to-rerun figure is what a user gets
 * (AGENTQ_LOCK_DURATION_MS / AGENTQ_STALLED_INTERVAL_MS in the environment measure other settings).
 */
describe('chaos: workers SIGKILLed and restarted under model-calling runs', () => {
  const seed = suiteSeed();
  // The defaults of config.ts, unless the environment sets the lock and stall settings to measure others.
  const stallSettings = Object.fromEntries(
    ['AGENTQ_LOCK_DURATION_MS', 'AGENTQ_STALLED_INTERVAL_MS'].flatMap((name) =>
      process.env[name] ? [[name, process.env[name]!]] : [],
    ),
  );
  const config = testConfig({ AGENTQ_WORKER_CONCURRENCY: String(CONCURRENCY), ...stallSettings });
  const client = new AgentClient({ config });
  const starting = startModelStepsServer({ seed, latencyMs: [50, 300] });
  const workers: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await client.close();
    await (await starting).close();
  });

  it(
    `${RUNS} runs × ${STEPS} steps: all complete, no step committed twice, histories valid, duplicate model calls only from kills`,
    async () => {
      console.log(
        `workers-killed seed=${seed} (AGENTQ_SEED=${seed} replays the kill schedule and the model latencies)`,
      );
      const model = await starting;
      const env = modelStepsWorkerEnv(config, model.server.url);
      for (let index = 0; index < WORKERS; index += 1) workers.push(await spawnWorker(MODEL_STEPS_WORKER, env));
      const began = Date.now();
      const runs = await Promise.all(
        Array.from({ length: RUNS }, (_, index) =>
          client.enqueue({ graph: MODEL_STEPS_GRAPH, input: { steps: STEPS }, runId: `killed-${seed}-${index}` }),
        ),
      );
      const runIds = runs.map((run) => run.id);

      let finished = false;
      const waiting = waitForRuns(client, runIds, { timeoutMs: atScale(120_000, 15 * 60_000) }).finally(
        () => (finished = true),
      );
      const settled = waiting.then(
        () => undefined,
        () => undefined,
      );
      const random = seededRandom(seed, 'kills');
      const kills: Kill[] = [];
      for (;;) {
        const [min, max] = KILL_EVERY_MS;
        await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, min + random() * (max - min)))]);
        // The victim is a worker with a model request in flight, so each kill lands mid-step. Picked by the
        // clock alone, a kill on a loaded machine could land on a worker that was still starting up, and the
        // scenario would prove nothing.
        const victim = await workerMidCall(() => finished, random);
        if (victim === undefined) break;
        kills.push({ pid: workers[victim]!.pid!, at: Date.now() });
        await killHard(workers[victim]!);
        console.log(
          `kill #${kills.length}: worker ${victim} (pid ${kills.at(-1)!.pid}) at +${((kills.at(-1)!.at - began) / 1000).toFixed(1)} s`,
        );
        workers[victim] = await spawnWorker(MODEL_STEPS_WORKER, env);
      }
      const records = await waiting;
      const wallSeconds = (Date.now() - began) / 1000;

      const audits = await Promise.all(runIds.map((runId) => auditRun(client, runId, { supersteps: STEPS })));
      const problems = audits.flatMap((audit) => [...audit.problems, ...historyShapeProblems(audit)]);
      const calls = model.calls();
      const unexplained = unexplainedModelCalls(calls, kills);
      const recoveries = killRecoveries(kills, calls, new Map(audits.map((audit) => [audit.runId, audit])));
      const recoverySeconds = recoveries.map((recovery) => recovery.seconds);
      const completed = records.filter((record) => record.status === 'completed').length;
      const duplicates = model.duplicateCalls();

      recordFigure({ scenario: SCENARIO, name: 'seed', value: seed });
      recordFigure({
        scenario: SCENARIO,
        name: 'runs × steps, workers × concurrency',
        value: `${RUNS} × ${STEPS}, ${WORKERS} × ${CONCURRENCY}`,
      });
      recordFigure({
        scenario: SCENARIO,
        name: 'lock_duration / stalled_interval (ms)',
        value: `${config.lockDurationMs} / ${config.stalledIntervalMs}`,
      });
      recordFigure({ scenario: SCENARIO, name: 'kills', value: kills.length });
      recordFigure({ scenario: SCENARIO, name: 'runs_completed', value: completed, goal: `= ${RUNS}` });
      recordFigure({ scenario: SCENARIO, name: 'runs_lost', value: RUNS - completed, goal: '= 0' });
      recordFigure({
        scenario: SCENARIO,
        name: 'steps_committed_twice',
        value: audits.reduce((sum, audit) => sum + audit.committedTwice.length, 0),
        goal: '= 0',
      });
      recordFigure({
        scenario: SCENARIO,
        name: 'histories_failing_i3',
        value: audits.filter((audit) => audit.historyProblems.length > 0).length,
        goal: '= 0',
      });
      recordFigure({
        scenario: SCENARIO,
        name: 'duplicate_model_calls',
        value: duplicates,
        goal: `≤ kills × concurrency = ${kills.length * CONCURRENCY}`,
      });
      recordFigure({ scenario: SCENARIO, name: 'steps_interrupted_by_kills', value: recoveries.length });
      recordFigure({
        scenario: SCENARIO,
        name: 'kill_to_step_running_p50_s',
        value: round(percentile(recoverySeconds, 50), 2),
      });
      recordFigure({
        scenario: SCENARIO,
        name: 'kill_to_step_running_p95_s',
        value: round(percentile(recoverySeconds, 95), 2),
        goal: 'p95 ≤ 10 s',
      });
      recordFigure({
        scenario: SCENARIO,
        name: 'kill_to_step_running_max_s',
        value: round(Math.max(...recoverySeconds), 2),
      });
      recordFigure({ scenario: SCENARIO, name: 'wall_s', value: round(wallSeconds, 1) });

      expect(problems).toEqual([]);
      expect(completed).toBe(RUNS);
      expect(unexplained).toEqual([]);
      expect(duplicates).toBeLessThanOrEqual(kills.length * CONCURRENCY);
      // The scenario proves something only if kills hit steps mid-flight.
      expect(recoveries.length).toBeGreaterThan(0);
    },
    atScale(180_000, 20 * 60_000),
  );
  /** Index of a worker with a request in flight (seeded pick among them), waiting until one has; undefined once the runs are done. */
  async function workerMidCall(done: () => boolean, random: () => number): Promise<number | undefined> {
    const model = await starting;
    for (;;) {
      if (done()) return undefined;
      const pending = new Set(
        model
          .calls()
          .filter((call) => call.outcome === 'pending')
          .map((call) => call.pid),
      );
      const candidates = workers.flatMap((worker, index) => (pending.has(worker.pid!) ? [index] : []));
      if (candidates.length > 0) return candidates[Math.floor(random() * candidates.length)];
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
});

/** The history a 5-step run must have: per step, its assistant answer then the tool result, in step order. */
function historyShapeProblems(audit: RunAudit): string[] {
  const expected = [...Array(STEPS).keys()].flatMap((step) => [`assistant:answer s${step}`, `tool:noted step ${step}`]);
  const actual = audit.messages.map((message) => `${message.role}:${message.content ?? ''}`);
  return JSON.stringify(actual) === JSON.stringify(expected)
    ? []
    : [`${audit.runId}: history ${JSON.stringify(actual)}`];
}

/**
 * No paid work twice: a (run, step) may ask the model again only when the process that asked before was killed (it
 * died before it could save the response). Returns every request that breaks this. A killed process
 * made all its requests before its kill, even those the server read after the kill was sent.
 */
function unexplainedModelCalls(calls: StepCall[], kills: Kill[]): string[] {
  const killed = new Set(kills.map((kill) => kill.pid));
  const byStep = new Map<string, StepCall[]>();
  for (const call of calls)
    byStep.set(`${call.runId}/${call.step}`, [...(byStep.get(`${call.runId}/${call.step}`) ?? []), call]);
  const problems: string[] = [];
  for (const [key, stepCalls] of byStep) {
    for (const earlier of stepCalls.slice(0, -1)) {
      if (!killed.has(earlier.pid))
        problems.push(
          `${key}: asked again after pid ${earlier.pid}'s request (${earlier.outcome}), but that process was not killed`,
        );
    }
  }
  return problems;
}

interface Recovery {
  kill: Kill;
  step: string;
  /** From the kill to the step's next `step-start`. */
  seconds: number;
}

/**
 * For each kill, the steps the killed process was running (it had asked the model for them) that had
 * to run again, and how long until each did: its first `step-start` after the kill. A step whose
 * commit the process sent just before it died has no such start (Redis may apply that commit after
 * the kill signal was sent) and is not counted; a step that never ran again would leave its run
 * unfinished, which the audit reports.
 */
function killRecoveries(kills: Kill[], calls: StepCall[], audits: Map<string, RunAudit>): Recovery[] {
  const recoveries: Recovery[] = [];
  for (const kill of kills) {
    const asked = new Set(calls.filter((call) => call.pid === kill.pid).map((call) => `${call.runId}/${call.step}`));
    for (const id of asked) {
      const [runId, step] = id.split('/') as [string, string];
      const audit = audits.get(runId)!;
      const key = stepKey(Number(step));
      const committed = audit.commits.get(key);
      if (committed !== undefined && committed <= kill.at) continue;
      const restart = (audit.starts.get(key) ?? []).find((at) => at > kill.at);
      if (restart !== undefined) recoveries.push({ kill, step: id, seconds: (restart - kill.at) / 1000 });
    }
  }
  return recoveries;
}
