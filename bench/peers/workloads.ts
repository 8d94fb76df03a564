/**
 * One round of the peers bench on one system: the no-op and model workloads at one and at 100 runs
 * in flight, then the crash workload. Each returns plain figures; peers-report.ts takes medians over
 * rounds and agentq ÷ peer ratios of the same round.
 */
import { percentile } from '../lib/stats.js';
import { stepLatencies } from '../lib/step-timings.js';
import type { ForkedWorker } from '../lib/forked-worker.js';
import { processTreeCpuUs } from './cpu.js';
import { callsAgainAfterAnswer, type ModelCall } from './model-calls.js';
import { STEPS, type StepKind } from './peer-steps.js';
import type { SystemUnderTest } from './systems.js';

/** The scripted model's process, seen from the bench (bench/peers/workers/model-server.ts). */
export interface ModelControl {
  setLatency(ms: number): Promise<void>;
  answered(): Promise<number>;
  calls(): Promise<ModelCall[]>;
}

export const WORKLOADS = [
  { name: 'noop', kind: 'noop', latencyMs: 0 },
  { name: 'model0', kind: 'model', latencyMs: 0 },
  { name: 'model200', kind: 'model', latencyMs: 200 },
] as const satisfies readonly { name: string; kind: StepKind; latencyMs: number }[];
export type WorkloadName = (typeof WORKLOADS)[number]['name'];

/** What `--workloads` can name: the measured workloads and the kill round. */
export const ROUND_PARTS = [...WORKLOADS.map((workload) => workload.name), 'crash'] as const;
export type RoundPart = (typeof ROUND_PARTS)[number];

/** `--workloads a,b` checked against ROUND_PARTS (all of them when absent). */
export function roundPartsOf(list: string | undefined): RoundPart[] {
  if (list === undefined) return [...ROUND_PARTS];
  const names = list.split(',').filter((name) => name !== '');
  const unknown = names.filter((name) => !(ROUND_PARTS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(`BENCH_WORKLOADS: --workloads takes some of ${ROUND_PARTS.join(', ')}, got "${list}"`);
  return names as RoundPart[];
}

/** Runs per measurement, [one in flight, 100 in flight]. */
export function runsOf(latencyMs: number, quick: boolean): [number, number] {
  if (latencyMs > 0) return quick ? [2, 100] : [3, 200];
  return quick ? [5, 100] : [20, 500];
}

export const CRASH_RUNS = 100;
export const CRASH_MODEL_MS = 200;
const CRASH_DONE_WITHIN_MS = 180_000;

/** Figures of one system in one round, by name (`noop_step_p50_ms_r1`, `crash_kill_to_done_s`, …). */
export type RoundFigures = Record<string, number>;

export async function measureRound(
  system: SystemUnderTest,
  model: ModelControl,
  { quick, log, parts = ROUND_PARTS }: { quick: boolean; log(line: string): void; parts?: readonly RoundPart[] },
): Promise<RoundFigures> {
  const figures: RoundFigures = {};
  const expectCalls = async (kind: StepKind, runs: number) => {
    const calls = await model.answered();
    const expected = kind === 'model' ? runs * STEPS : 0;
    if (calls !== expected)
      throw new Error(`BENCH_MODEL_REQUESTS: ${runs} runs made ${calls} model calls, expected ${expected}`);
  };
  await model.setLatency(0);
  await system.measure('model', 10, quick ? 10 : 30); // warm-up: connections, JIT, the model client
  for (const { name, kind, latencyMs } of WORKLOADS.filter((workload) => parts.includes(workload.name))) {
    const [oneRuns, manyRuns] = runsOf(latencyMs, quick);
    await model.setLatency(latencyMs);
    const one = await system.measure(kind, 1, oneRuns);
    await expectCalls(kind, oneRuns);
    const latencies = one.timings.flatMap(stepLatencies);
    figures[`${name}_step_p50_ms_r1`] = percentile(latencies, 50);
    figures[`${name}_step_p95_ms_r1`] = percentile(latencies, 95);
    await model.setLatency(latencyMs);
    const pids = system.pids();
    const cpuBefore = processTreeCpuUs(pids) + selfCpuUs();
    const many = await system.measure(kind, 100, manyRuns);
    const cpuUs = processTreeCpuUs(pids) + selfCpuUs() - cpuBefore;
    await expectCalls(kind, manyRuns);
    figures[`${name}_steps_per_s_r100`] = (manyRuns * STEPS) / (many.elapsedMs / 1000);
    figures[`${name}_cpu_us_per_step_r100`] = cpuUs / (manyRuns * STEPS);
    log(
      `  ${name}: r1 p50 ${figures[`${name}_step_p50_ms_r1`]!.toFixed(2)} ms, r100 ${figures[`${name}_steps_per_s_r100`]!.toFixed(0)} steps/s, ${figures[`${name}_cpu_us_per_step_r100`]!.toFixed(0)} µs CPU/step`,
    );
  }
  if (parts.includes('crash')) Object.assign(figures, await crash(system, model, log));
  return figures;
}

/** The bench process's own CPU (it enqueues agentq's runs; for the others it only waits). */
function selfCpuUs(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/**
 * CRASH_RUNS model-calling runs (CRASH_MODEL_MS model), the worker SIGKILLed once half their calls
 * were answered, a new worker started at once. → calls made again after their answer had arrived,
 * s from the kill until every run finished, s from the new process's start to its first model call
 * (the first step it took, which waits for the system to give the killed steps back), and s from its
 * start to its own "ready" (imports, connections, registration done: it could take a step).
 */
async function crash(system: SystemUnderTest, model: ModelControl, log: (line: string) => void): Promise<RoundFigures> {
  await model.setLatency(CRASH_MODEL_MS);
  const finished = new Set<string>();
  const listen = (worker: ForkedWorker) => worker.onFinished((runId) => finished.add(runId));
  listen(system.worker);
  const runIds = await system.submit('model', CRASH_RUNS);
  const half = (CRASH_RUNS * STEPS) / 2;
  while ((await model.answered()) < half) await new Promise((resolve) => setTimeout(resolve, 10));
  const killedAt = Date.now();
  await system.worker.kill();
  const startedAt = Date.now();
  listen(await system.restart());
  const upAt = Date.now();
  await system.resume(
    'model',
    runIds.filter((runId) => !finished.has(runId)),
  );
  const deadline = Date.now() + CRASH_DONE_WITHIN_MS;
  while (runIds.some((runId) => !finished.has(runId))) {
    if (Date.now() > deadline)
      throw new Error(`BENCH_CRASH: ${runIds.filter((runId) => !finished.has(runId)).length} runs unfinished`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const doneAt = Date.now();
  const calls = await model.calls();
  const firstCall = Math.min(...calls.filter((call) => call.receivedAt >= startedAt).map((call) => call.receivedAt));
  const figures = {
    crash_again_after_answer: callsAgainAfterAnswer(calls, killedAt),
    crash_again_after_answer_1s: callsAgainAfterAnswer(calls, killedAt, 1000),
    crash_kill_to_done_s: (doneAt - killedAt) / 1000,
    crash_worker_ready_s: (firstCall - startedAt) / 1000,
    crash_worker_up_s: (upAt - startedAt) / 1000,
    crash_model_calls: calls.length,
  };
  log(
    `  crash: ${figures.crash_again_after_answer} calls again after their answer (${figures.crash_again_after_answer_1s} after one sent ≥ 1 s before the kill), kill→done ${figures.crash_kill_to_done_s.toFixed(2)} s, first step ${figures.crash_worker_ready_s.toFixed(2)} s, up ${figures.crash_worker_up_s.toFixed(2)} s`,
  );
  return figures;
}
