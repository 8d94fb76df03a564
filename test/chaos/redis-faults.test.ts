import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { MODEL_STEPS_GRAPH } from './workers-killed-graph.js';
import { startModelStepsServer } from './workers-killed-model-server.js';
import { MODEL_STEPS_WORKER, modelStepsWorkerEnv } from './workers-killed-worker-env.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale } from '../helpers/suite-scale.js';
import { pausedWorkerScenario, redisFullScenario, type Figures } from './fault-scenarios.js';

const record = (scenario: string, figures: Figures, goals: Record<string, string> = {}) => {
  for (const [name, value] of Object.entries(figures))
    if (typeof value === 'number')
      recordFigure({ scenario, name, value, ...(goals[name] ? { goal: goals[name] } : {}) });
};

/**
 * Redis faults with real processes and a real redis-server: Redis full under model-calling runs
 * (a paid response whose save was refused is neither lost nor bought again; no attempt is spent; no run
 * stalls), and a worker paused with calls in flight (it sends nothing after it resumes; the takeover wait
 * decides whether its in-flight calls are paid twice).
 */
describe('chaos: Redis full, paused workers (issue 34)', () => {
  it('Redis full under model-calling runs: 0 calls paid twice, 0 attempts spent, 0 runs stalled > 30 s, producers get REDIS_FULL', async () => {
    const { producerErrorCode, figures } = await redisFullScenario({
      runs: atScale(12, 40),
      fullMs: atScale(5000, 15_000),
    });
    record('redis full', figures, {
      full_model_calls_paid_twice: '= 0',
      full_step_attempts_spent: '= 0',
      full_runs_stalled_over_30s: '= 0',
    });
    expect(producerErrorCode).toBe('REDIS_FULL');
    expect(figures.full_runs_completed).toBe(figures.full_runs);
    expect(figures.full_model_calls_paid_twice).toBe(0);
    expect(figures.full_step_attempts_spent).toBe(0);
    expect(figures.full_runs_stalled_over_30s).toBe(0);
  }, 400_000);

  it('SIGSTOP of a worker mid-call (default takeover): it sends no call after it resumes', async () => {
    const figures = await pausedWorkerScenario({ pauseMs: atScale(6000, 10_000), takeoverMs: 0 });
    record('paused worker, takeover 0', figures, { pause_calls_sent_by_paused_worker_after_resume: '= 0' });
    expect(figures.pause_calls_sent_by_paused_worker_after_resume).toBe(0);
  }, 300_000);

  it('SIGSTOP of a worker mid-call with a takeover wait beyond the pause: 0 calls paid twice', async () => {
    const pauseMs = atScale(6000, 10_000);
    const figures = await pausedWorkerScenario({ pauseMs, takeoverMs: pauseMs + 5000 });
    record('paused worker, takeover > pause', figures, {
      pause_model_calls_paid_twice: '= 0',
      pause_calls_sent_by_paused_worker_after_resume: '= 0',
    });
    expect(figures.pause_calls_sent_by_paused_worker_after_resume).toBe(0);
    expect(figures.pause_model_calls_paid_twice).toBe(0);
  }, 300_000);

  it('a worker paused between claiming a model call and sending it does not send it after it resumes: the step was committed elsewhere', async () => {
    const seed = 34;
    const model = await startModelStepsServer({ seed, latencyMs: [200, 400] });
    const config = testConfig();
    const client = new AgentClient({ config });
    const env = modelStepsWorkerEnv(config, model.server.url);
    const workers: ChildProcess[] = [];
    try {
      const victim = await spawnWorker('test/chaos/pause-before-send-worker.ts', { ...env, STOP_IN_FIRST_CALL: '1' });
      workers.push(victim);
      const run = await client.enqueue({ graph: MODEL_STEPS_GRAPH, input: { steps: 1 }, runId: `pause-send-${seed}` });
      await eventually(async () => stopped(victim.pid!), 20_000, 'the victim to stop itself mid-claim');
      // A peer takes the step over once the victim's liveness lapses, pays for it and commits it.
      workers.push(await spawnWorker(MODEL_STEPS_WORKER, env));
      const done = await client.wait(run.id, { timeoutMs: 60_000 });
      expect(done.status).toBe('completed');
      const resumedAt = Date.now();
      victim.kill('SIGCONT');
      // Whatever the resumed victim does, it does within a few seconds: give it them, then count.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const calls = model.callsOf(run.id, 0);
      recordFigure({
        scenario: 'paused before send',
        name: 'calls_sent_by_paused_worker_after_resume',
        value: calls.filter((call) => call.pid === victim.pid && call.receivedAt >= resumedAt).length,
        goal: '= 0',
      });
      expect(calls.map((call) => call.pid)).toEqual([workers[1]!.pid]);
    } finally {
      for (const worker of workers) worker.kill('SIGCONT');
      await Promise.all(workers.map((worker) => killHard(worker)));
      await client.close();
      await model.close();
    }
  }, 120_000);
});

/** Whether process `pid` is stopped (SIGSTOP): its state in /proc is T. */
function stopped(pid: number): boolean {
  try {
    return /^State:\s+T/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
