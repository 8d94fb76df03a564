import type { ChildProcess } from 'node:child_process';
import { QueueEvents } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { round } from '../../bench/lib/stats.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { stepQueuePrefix } from '../../shared/contracts/shards.js';
import { auditRun } from '../helpers/run-audit.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale, suiteSeed } from '../helpers/suite-scale.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { waitForRuns } from '../helpers/wait-for-runs.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { MODEL_STEPS_GRAPH } from './workers-killed-graph.js';
import { startModelStepsServer } from './workers-killed-model-server.js';
import { MODEL_STEPS_WORKER, modelStepsWorkerEnv } from './workers-killed-worker-env.js';

const SCENARIO = 'graceful shutdown';
const RUNS = atScale(10, 24);
const STEPS = 3;
const CONCURRENCY = 4;
/** The bound for draining a worker; generous, since the slowest model call here is 3 s. */
const DRAIN_BOUND_MS = 30_000;

/**
 * Fault scenario 6: SIGTERM a worker process while its steps are mid model call (1.5-3 s each). With
 * the default shutdown grace (25 s) it stops taking jobs, lets those calls finish and commit, and exits
 * by itself; no job is left to the stall check, no (run, step) asks the model twice, and the runs
 * complete on the other worker.
 */
describe('chaos: graceful shutdown with steps mid model call', () => {
  const seed = suiteSeed();
  const config = testConfig({
    AGENTQ_WORKER_CONCURRENCY: String(CONCURRENCY),
    AGENTQ_SHUTDOWN_GRACE_MS: String(loadConfig({}).shutdownGraceMs),
  });
  const client = new AgentClient({ config });
  const starting = startModelStepsServer({ seed, latencyMs: [1500, 3000] });
  const queueEvents = new QueueEvents(STEP_QUEUE, {
    connection: { url: config.redisUrl!, maxRetriesPerRequest: null },
    prefix: stepQueuePrefix(config.queuePrefix, 0, config.shards),
  });
  const workers: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await queueEvents.close();
    await client.close();
    await (await starting).close();
  });

  it('the SIGTERMed worker drains its model calls and exits within 30 s: no stall, no duplicate model call, every run completes', async () => {
    console.log(`graceful-shutdown seed=${seed} (AGENTQ_SEED=${seed} replays the model latencies)`);
    const stalled: string[] = [];
    queueEvents.on('stalled', ({ jobId }) => stalled.push(jobId));
    await queueEvents.waitUntilReady();
    const model = await starting;
    const env = modelStepsWorkerEnv(config, model.server.url);
    const [draining, other] = [await spawnWorker(MODEL_STEPS_WORKER, env), await spawnWorker(MODEL_STEPS_WORKER, env)];
    workers.push(draining!, other!);
    const runs = await Promise.all(
      Array.from({ length: RUNS }, (_, index) =>
        client.enqueue({ graph: MODEL_STEPS_GRAPH, input: { steps: STEPS }, runId: `graceful-${seed}-${index}` }),
      ),
    );

    // SIGTERM once the worker is busy: every slot waiting on the model.
    const pendingOf = (pid: number) => model.calls().filter((call) => call.pid === pid && call.outcome === 'pending');
    const inFlight = await eventually(
      async () => pendingOf(draining!.pid!).length === CONCURRENCY && pendingOf(draining!.pid!),
      60_000,
      'the worker to be mid-call on all its slots',
    );
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
      draining!.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
    });
    const termAt = Date.now();
    draining!.kill('SIGTERM');
    const exit = await Promise.race([
      exited,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2 * DRAIN_BOUND_MS)),
    ]);
    const drainMs = exit ? exit.at - termAt : undefined;

    const records = await waitForRuns(
      client,
      runs.map((run) => run.id),
      { timeoutMs: 120_000 },
    );
    const audits = await Promise.all(runs.map((run) => auditRun(client, run.id, { supersteps: STEPS })));
    const calls = model.calls();
    // The calls in flight at SIGTERM, as they ended: each answered (not aborted), and asked once.
    const drained = inFlight.map((call) =>
      model
        .callsOf(call.runId, call.step)
        .map(
          (again) => `${call.runId}/s${call.step}: ${again.pid === call.pid ? 'draining' : 'other'} ${again.outcome}`,
        ),
    );
    const startedWhileDraining = calls.filter((call) => call.pid === draining!.pid && call.receivedAt > termAt).length;

    recordFigure({ scenario: SCENARIO, name: 'seed', value: seed });
    recordFigure({ scenario: SCENARIO, name: 'steps_mid_call_at_sigterm', value: inFlight.length });
    recordFigure({
      scenario: SCENARIO,
      name: 'sigterm_to_exit_s',
      value: drainMs === undefined ? 'no exit' : round(drainMs / 1000, 2),
      goal: '≤ 30 s',
    });
    recordFigure({ scenario: SCENARIO, name: 'steps_started_after_sigterm', value: startedWhileDraining });
    recordFigure({ scenario: SCENARIO, name: 'stalled_jobs', value: stalled.length, goal: '= 0' });
    recordFigure({ scenario: SCENARIO, name: 'duplicate_model_calls', value: model.duplicateCalls(), goal: '= 0' });
    recordFigure({
      scenario: SCENARIO,
      name: 'runs_completed',
      value: records.filter((record) => record.status === 'completed').length,
      goal: `= ${RUNS}`,
    });

    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(drainMs).toBeLessThanOrEqual(DRAIN_BOUND_MS);
    expect(drained).toEqual(inFlight.map((call) => [`${call.runId}/s${call.step}: draining answered`]));
    expect(stalled).toEqual([]);
    expect(calls).toHaveLength(RUNS * STEPS);
    expect(model.duplicateCalls()).toBe(0);
    expect(audits.flatMap((audit) => audit.problems)).toEqual([]);
    // The steps after the drained ones ran on the other worker.
    const after = inFlight
      .filter((call) => call.step + 1 < STEPS)
      .map((call) => model.callsOf(call.runId, call.step + 1)[0]?.pid);
    expect(after.every((pid) => pid === other!.pid)).toBe(true);
  }, 180_000);
});
