/**
 * agentq on the model-calling graph (bench/lib/model-graph.ts): steps/s and step latency p50/p95 at
 * 1, 10 and 100 runs in flight, with the scripted model answering after 0 ms and after 200 ms. One
 * worker process (concurrency 100); the scripted server runs in this process.
 *
 * Both the `steps` section (which reports these figures) and the `langgraph` section (which divides
 * LangGraph's by them) need them: they are measured once per Redis and scale, and shared.
 */
import { randomBytes } from 'node:crypto';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../../test/fakes/scripted-openai-server.js';
import type { BenchContext, BenchFigures } from './bench-section.js';
import { engineLoop, stepTimingsOf } from './engine-loop.js';
import { figureRecorder } from './figure-recorder.js';
import { forkWorker } from './forked-worker.js';
import { MODEL_GRAPH_MODEL, MODEL_GRAPH_NAME, MODEL_GRAPH_NODES } from './model-graph.js';
import { percentile } from './stats.js';
import { stepLatencies, type StepTiming } from './step-timings.js';

export const MODEL_LATENCIES_MS = [0, 200] as const;
export const IN_FLIGHT = [1, 10, 100] as const;
export type ModelLatency = (typeof MODEL_LATENCIES_MS)[number];
export type InFlight = (typeof IN_FLIGHT)[number];

/** Runs per measurement: enough for a steady figure at full scale, a few seconds each at 200 ms. */
export function modelGraphRuns(latencyMs: ModelLatency, inFlight: InFlight, quick: boolean): number {
  const table: Record<ModelLatency, Record<InFlight, [quick: number, full: number]>> = {
    0: { 1: [5, 30], 10: [20, 100], 100: [100, 500] },
    200: { 1: [2, 5], 10: [10, 30], 100: [100, 300] },
  };
  const [quickRuns, fullRuns] = table[latencyMs][inFlight];
  return quick ? quickRuns : fullRuns;
}

/** Figure names, e.g. `engine_model_steps_per_s_r100_200ms`; LangGraph's use the prefix `langgraph_sqlite`. */
export const modelFigure = (
  prefix: string,
  measure: 'steps_per_s' | 'step_p50_ms' | 'step_p95_ms',
  inFlight: number,
  latencyMs: number,
) => `${prefix}_${measure}_r${inFlight}_${latencyMs}ms`;

/** Records steps/s and step latency p50/p95 of one measurement. */
export function recordModelFigures(
  record: (name: string, value: number) => number,
  prefix: string,
  {
    inFlight,
    latencyMs,
    runs,
    elapsedMs,
    timings,
  }: { inFlight: number; latencyMs: number; runs: number; elapsedMs: number; timings: readonly StepTiming[][] },
): void {
  const latencies = timings.flatMap(stepLatencies);
  record(modelFigure(prefix, 'steps_per_s', inFlight, latencyMs), (runs * MODEL_GRAPH_NODES) / (elapsedMs / 1000));
  record(modelFigure(prefix, 'step_p50_ms', inFlight, latencyMs), percentile(latencies, 50));
  record(modelFigure(prefix, 'step_p95_ms', inFlight, latencyMs), percentile(latencies, 95));
}

/** A scripted model whose answers wait `latencyMs` (settable between measurements). */
export async function startBenchModel(): Promise<{
  server: ScriptedOpenAIServer;
  setLatency(latencyMs: number): void;
}> {
  let latency = 0;
  const server = await startScriptedOpenAIServer({ script: () => ({ delayMs: latency, content: 'ok' }) });
  return {
    server,
    setLatency(latencyMs) {
      latency = latencyMs;
      server.reset(); // the request log would otherwise grow for the whole benchmark
    },
  };
}

const measured = new Map<string, Promise<BenchFigures>>();

/** The figures for this Redis and scale, measured on the first call. */
export function agentqModelGraphFigures(context: BenchContext): Promise<BenchFigures> {
  const key = `${context.redisUrl}|${context.quick}`;
  let figures = measured.get(key);
  if (!figures) {
    figures = measure(context);
    measured.set(key, figures);
  }
  return figures;
}

async function measure({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  const model = await startBenchModel();
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchm${id}`,
    AGENTQ_QUEUE_PREFIX: `benchmq${id}`,
    AGENTQ_WORKER_CONCURRENCY: '100',
    AGENTQ_LOG_LEVEL: 'error',
    AGENTQ_RETENTION_SECONDS: '600',
    OTEL_TRACES_EXPORTER: 'none',
    OPENAI_BASE_URL: model.server.url,
    OPENAI_API_KEY: 'bench',
    LLM_MODEL: MODEL_GRAPH_MODEL,
    BENCH_RECORD_STEPS: 'true',
  };
  log(
    `agentq, ${MODEL_GRAPH_NODES}-node graph with one model call per node (scripted model, real openai SDK), worker concurrency 100`,
  );
  const client = new AgentClient({ config: loadConfig(env) });
  const worker = await forkWorker('bench/workers/engine-worker.ts', env);
  try {
    const run = (inFlight: number, total: number) =>
      engineLoop(worker, client, { graph: MODEL_GRAPH_NAME, input: {}, inFlight, total });
    await run(10, 20); // warm-up: connections, JIT, the model client
    for (const latencyMs of MODEL_LATENCIES_MS) {
      model.setLatency(latencyMs);
      for (const inFlight of IN_FLIGHT) {
        const runs = modelGraphRuns(latencyMs, inFlight, quick);
        const { elapsedMs, runIds } = await run(inFlight, runs);
        const requests = model.server.chatRequests().length;
        if (requests !== runs * MODEL_GRAPH_NODES)
          throw new Error(
            `BENCH_MODEL_REQUESTS: ${runs} runs made ${requests} model requests, expected ${runs * MODEL_GRAPH_NODES}`,
          );
        recordModelFigures(record, 'engine_model', {
          inFlight,
          latencyMs,
          runs,
          elapsedMs,
          timings: await stepTimingsOf(worker, runIds),
        });
        model.setLatency(latencyMs);
      }
    }
  } finally {
    await worker.stop();
    await client.close();
    await model.server.close();
  }
  return figures;
}
