import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig, type Config } from '../../shared/config/config.js';
import type { RunRecord, StepRecord } from '../../shared/contracts/run-record.js';
import { isTerminal } from '../../shared/contracts/run-record.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { startRestartableRedis, type RestartableRedis } from './redis-restartable.js';
import { MODEL_STEPS_GRAPH } from './workers-killed-graph.js';
import { startModelStepsServer, type ModelStepsServer } from './workers-killed-model-server.js';
import { MODEL_STEPS_WORKER, modelStepsWorkerEnv } from './workers-killed-worker-env.js';

/**
 * Redis fault scenarios (full, paused workers, late commits) with real processes and a real redis-server of their own:
 * worker processes running `model-steps` runs (one memoised model call per step through the real openai SDK), the model
 * calls counted per (run, step) on the scripted server. Shared by test/chaos/redis-faults.test.ts (which
 * asserts) and `npm run bench -- --only faults` (which prints the figures).
 */
export type Figures = Record<string, number>;

export interface Fleet {
  redis: RestartableRedis;
  admin: Redis;
  config: Config;
  client: AgentClient;
  model: ModelStepsServer;
  workers: ChildProcess[];
  /** Each worker's stderr lines (JSON logs at `warn` and above). */
  logs: string[][];
  close(): Promise<void>;
}

export async function startFleet({
  workers,
  concurrency,
  latencyMs,
  env = {},
}: {
  workers: number;
  concurrency: number;
  latencyMs: [number, number];
  env?: Record<string, string>;
}): Promise<Fleet> {
  const redis = await startRestartableRedis();
  const admin = new Redis(redis.url);
  const id = randomBytes(4).toString('hex');
  const config = loadConfig({
    REDIS_URL: redis.url,
    AGENTQ_KEY_PREFIX: `f${id}`,
    AGENTQ_QUEUE_PREFIX: `fq${id}`,
    AGENTQ_LOG_LEVEL: 'silent',
    AGENTQ_WORKER_CONCURRENCY: String(concurrency),
    AGENTQ_SHUTDOWN_GRACE_MS: '2000',
    EMBED_PROVIDER: 'none',
  });
  const model = await startModelStepsServer({ seed: 34, latencyMs });
  const children: ChildProcess[] = [];
  const logs: string[][] = [];
  for (let index = 0; index < workers; index += 1) {
    const lines: string[] = [];
    logs.push(lines);
    children.push(
      await spawnWorker(
        MODEL_STEPS_WORKER,
        { ...modelStepsWorkerEnv(config, model.server.url), AGENTQ_LOG_LEVEL: 'warn', ...env },
        { onStderr: (text) => lines.push(...text.split('\n').filter((line) => line.trim() !== '')) },
      ),
    );
  }
  const client = new AgentClient({ config });
  return {
    redis,
    admin,
    config,
    client,
    model,
    workers: children,
    logs,
    async close() {
      await admin.config('SET', 'maxmemory', '0').catch(() => undefined);
      await Promise.all(children.map((child) => killHard(child)));
      await client.close();
      admin.disconnect();
      await model.close();
      await redis.close();
    },
  };
}

export async function enqueueRuns(fleet: Fleet, runs: number, steps: number, tag: string): Promise<string[]> {
  const records = await Promise.all(
    Array.from({ length: runs }, (_, index) =>
      fleet.client.enqueue({ graph: MODEL_STEPS_GRAPH, input: { steps }, runId: `${tag}-${index}` }),
    ),
  );
  return records.map((record) => record.id);
}

export async function until<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function allFinished(fleet: Fleet, ids: string[], timeoutMs: number): Promise<RunRecord[]> {
  return until(
    async () => {
      const records = await Promise.all(ids.map((id) => fleet.client.get(id)));
      return records.every((record) => record && isTerminal(record.status)) && (records as RunRecord[]);
    },
    timeoutMs,
    `${ids.length} runs to finish`,
  );
}

/** Attempts beyond the first, over every committed step, and runs with a gap > 30 s between two steps. */
async function stepFigures(fleet: Fleet, ids: string[]): Promise<{ attemptsSpent: number; stalledOver30s: number }> {
  let attemptsSpent = 0;
  let stalledOver30s = 0;
  for (const id of ids) {
    const steps: StepRecord[] = await fleet.client.steps(id);
    attemptsSpent += steps.reduce((sum, step) => sum + step.attempts - 1, 0);
    const sorted = [...steps].sort((a, b) => a.index - b.index);
    const gaps = sorted.slice(1).map((step, index) => Date.parse(step.startedAt) - Date.parse(sorted[index]!.endedAt));
    if (gaps.some((gap) => gap > 30_000)) stalledOver30s += 1;
  }
  return { attemptsSpent, stalledOver30s };
}

/**
 * Redis full (CONFIG SET maxmemory 1, noeviction) for `fullMs` under `runs` model-calling runs on two
 * workers. Figures: runs completed, model calls paid twice, step attempts spent, runs stalled > 30 s,
 * seconds from Redis taking writes again to every run finished, the producer's error code while full,
 * and warning lines per worker per second of the outage.
 */
export async function redisFullScenario({
  runs = 40,
  steps = 4,
  fullMs = 15_000,
  log = () => undefined,
}: { runs?: number; steps?: number; fullMs?: number; log?: (line: string) => void } = {}): Promise<{
  producerErrorCode: string;
  figures: Figures;
}> {
  const fleet = await startFleet({ workers: 2, concurrency: runs, latencyMs: [500, 1500] });
  try {
    const ids = await enqueueRuns(fleet, runs, steps, 'full');
    await until(
      async () => (await Promise.all(ids.map((id) => fleet.client.get(id)))).every((run) => run!.stepCount >= 1),
      60_000,
      'every run to commit a step',
    );
    const warningsBefore = fleet.logs.map((lines) => lines.length);
    log(`redis full: ${runs} runs in flight; Redis refuses writes for ${fullMs} ms`);
    await fleet.admin.config('SET', 'maxmemory', '1');
    const fullAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, fullMs / 2)));
    const producerErrorCode = await fleet.client.enqueue({ graph: MODEL_STEPS_GRAPH, input: { steps: 1 } }).then(
      () => 'accepted',
      (error: { code?: string }) => error.code ?? 'none',
    );
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, fullAt + fullMs - Date.now())));
    await fleet.admin.config('SET', 'maxmemory', '0');
    const roomyAt = Date.now();
    const warningLines = fleet.logs.reduce((sum, lines, index) => sum + lines.length - warningsBefore[index]!, 0);
    const records = await allFinished(fleet, ids, 180_000);
    const recoveredS = (Date.now() - roomyAt) / 1000;
    const { attemptsSpent, stalledOver30s } = await stepFigures(fleet, ids);
    const figures: Figures = {
      full_runs: runs,
      full_ms: fullMs,
      full_runs_completed: records.filter((record) => record.status === 'completed').length,
      full_model_calls: fleet.model.calls().length,
      full_model_calls_paid_twice: fleet.model.duplicateCalls(),
      full_step_attempts_spent: attemptsSpent,
      full_runs_stalled_over_30s: stalledOver30s,
      full_all_finished_after_redis_roomy_s: Math.round(recoveredS * 10) / 10,
      full_warning_lines_per_worker_per_s: Math.round((warningLines / 2 / (fullMs / 1000)) * 100) / 100,
      full_producer_got_redis_full: producerErrorCode === 'REDIS_FULL' ? 1 : 0,
    };
    return { producerErrorCode, figures };
  } finally {
    await fleet.close();
  }
}

/**
 * A worker with `concurrency` model calls in flight is stopped (SIGSTOP) for `pauseMs` — or killed
 * (`kill: true`) — with AGENTQ_PAID_CLAIM_TAKEOVER_MS = `takeoverMs`; a second worker takes its steps
 * over. Figures: calls the paused worker sent after it resumed, calls paid twice, and the seconds from the
 * fault to the victim's in-flight steps all being committed (by anyone): the recovery side of the trade.
 */
export async function pausedWorkerScenario({
  pauseMs = 10_000,
  takeoverMs = 0,
  concurrency = 8,
  kill = false,
  log = () => undefined,
}: {
  pauseMs?: number;
  takeoverMs?: number;
  concurrency?: number;
  kill?: boolean;
  log?: (line: string) => void;
} = {}): Promise<Figures> {
  // Two workers from the start, each with room for every run: the one with more calls in flight is the
  // victim, the other takes its steps over.
  const fleet = await startFleet({
    workers: 2,
    concurrency: 2 * concurrency,
    latencyMs: [6000, 6500],
    env: { AGENTQ_PAID_CLAIM_TAKEOVER_MS: String(takeoverMs) },
  });
  try {
    const ids = await enqueueRuns(fleet, 2 * concurrency, 2, kill ? 'killed' : 'paused');
    const pendingOf = (pid: number | undefined) =>
      fleet.model.calls().filter((call) => call.pid === pid && call.outcome === 'pending' && call.step === 0);
    await until(
      async () => fleet.model.calls().filter((call) => call.outcome === 'pending').length === 2 * concurrency,
      60_000,
      'every run to be mid-call',
    );
    const [victim] = [...fleet.workers].sort((a, b) => pendingOf(b.pid).length - pendingOf(a.pid).length);
    if (!victim) throw new Error('no worker');
    const inFlight = pendingOf(victim.pid).length;
    const victimRuns = new Set(pendingOf(victim.pid).map((call) => call.runId));
    const faultAt = Date.now();
    log(
      `${kill ? 'kill -9' : `SIGSTOP ${pauseMs} ms`} of a worker with ${inFlight} calls in flight, takeover ${takeoverMs} ms`,
    );
    let resumedAt = Number.POSITIVE_INFINITY;
    if (kill) await killHard(victim);
    else {
      victim.kill('SIGSTOP');
      setTimeout(() => {
        victim.kill('SIGCONT');
        resumedAt = Date.now();
      }, pauseMs);
    }
    // The victim's first steps, committed by anyone: step 0 of each of its runs.
    await until(
      async () =>
        (await Promise.all([...victimRuns].map((id) => fleet.client.get(id)))).every((run) => run!.stepCount >= 1),
      120_000,
      "the victim's steps to be committed",
    );
    const recoveredS = (Date.now() - faultAt) / 1000;
    await allFinished(fleet, ids, 120_000);
    if (!kill) await until(async () => Number.isFinite(resumedAt), 30_000, 'the victim to resume');
    // Calls still on their way when the runs finished (the resumed worker) land within a second or two.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const calls = fleet.model.calls();
    const prefix = kill ? 'kill' : 'pause';
    return {
      [`${prefix}_takeover_ms`]: takeoverMs,
      [`${prefix}_calls_in_flight`]: inFlight,
      ...(kill
        ? {}
        : {
            pause_ms: pauseMs,
            // Repeats only: after it resumed it may rightly take new steps of these runs.
            pause_calls_sent_by_paused_worker_after_resume: calls.filter(
              (call) =>
                call.pid === victim.pid &&
                call.receivedAt >= resumedAt &&
                fleet.model.callsOf(call.runId, call.step)[0]!.receivedAt < call.receivedAt,
            ).length,
          }),
      // Killed: the cut calls are asked again by design (the crash came before the save:
      // docs/concepts/at-most-once.md).
      [kill ? 'kill_model_calls_repeated' : 'pause_model_calls_paid_twice']: fleet.model.duplicateCalls(),
      [`${prefix}_inflight_steps_committed_after_s`]: Math.round(recoveredS * 10) / 10,
    };
  } finally {
    await fleet.close();
  }
}
