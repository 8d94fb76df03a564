/**
 * The `langgraph` section: the model-calling graph on LangGraph.js with its SQLite checkpointer
 * (bench/workers/langgraph-worker.ts says what its work includes), beside agentq on the same graph
 * (bench/lib/model-graph-figures.ts), with the same scripted model at 0 ms and 200 ms latency.
 *
 * - `engine_vs_langgraph_sqlite_r1`: LangGraph's time per step ÷ agentq's, one run in flight, 0 ms
 *   model (where the engines' own costs show); > 1 means agentq is faster. `_200ms`: the same at 200 ms.
 * - `engine_vs_langgraph_sqlite_r100`: agentq's steps/s ÷ LangGraph's with 100 runs in flight (for
 *   LangGraph: 100 concurrent `invoke`s in one process, each its own thread_id), 0 ms; `_200ms` likewise.
 * Time per step at r1 is a run's wall time ÷ its 10 steps (1 / steps per second), for both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { forkWorker } from '../lib/forked-worker.js';
import { MODEL_GRAPH_NODES } from '../lib/model-graph.js';
import {
  agentqModelGraphFigures,
  IN_FLIGHT,
  MODEL_LATENCIES_MS,
  modelFigure,
  modelGraphRuns,
  recordModelFigures,
  startBenchModel,
} from '../lib/model-graph-figures.js';
import type { StepTiming } from '../lib/step-timings.js';

interface Measured {
  elapsedMs: number;
  timings: StepTiming[][];
  checkpointsPerRun: number;
  error?: string;
}

async function runLangGraph(context: BenchContext): Promise<BenchFigures> {
  const { quick, log } = context;
  const { figures, record } = figureRecorder(log);
  const model = await startBenchModel();
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-langgraph-'));
  let checkpointsPerRun = 0;
  try {
    for (const durability of ['async', 'sync'] as const) {
      const env = {
        OPENAI_BASE_URL: model.server.url,
        BENCH_LANGGRAPH_DB: join(dir, `checkpoints-${durability}.sqlite`),
        BENCH_LANGGRAPH_DURABILITY: durability,
      };
      log(
        `LangGraph.js ${MODEL_GRAPH_NODES}-node graph, SqliteSaver on ${env.BENCH_LANGGRAPH_DB} (WAL), durability '${durability}'`,
      );
      const worker = await forkWorker('bench/workers/langgraph-worker.ts', env);
      try {
        const measure = async (inFlight: number, runs: number) => {
          const result = await worker.request<Measured>({ type: 'measure', inFlight, runs }, 'measured');
          if (result.error) throw new Error(`BENCH_LANGGRAPH: ${result.error}`);
          const requests = model.server.chatRequests().length;
          if (requests !== runs * MODEL_GRAPH_NODES)
            throw new Error(
              `BENCH_MODEL_REQUESTS: ${runs} LangGraph runs made ${requests} model requests, expected ${runs * MODEL_GRAPH_NODES}`,
            );
          return result;
        };
        model.setLatency(0);
        await measure(10, 20); // warm-up, as agentq's measurement has
        if (durability === 'sync') {
          // Checkpoint before the next step, like agentq's commit: only the 0 ms figures, to show what it costs.
          for (const inFlight of [1, 100] as const) {
            model.setLatency(0);
            const runs = modelGraphRuns(0, inFlight, quick);
            const { elapsedMs } = await measure(inFlight, runs);
            record(
              `langgraph_sqlite_sync_steps_per_s_r${inFlight}_0ms`,
              (runs * MODEL_GRAPH_NODES) / (elapsedMs / 1000),
            );
          }
          continue;
        }
        for (const latencyMs of MODEL_LATENCIES_MS) {
          for (const inFlight of IN_FLIGHT) {
            model.setLatency(latencyMs);
            const runs = modelGraphRuns(latencyMs, inFlight, quick);
            const result = await measure(inFlight, runs);
            recordModelFigures(record, 'langgraph_sqlite', { inFlight, latencyMs, runs, ...result });
            checkpointsPerRun = result.checkpointsPerRun;
          }
        }
        record('langgraph_sqlite_checkpoints_per_run', checkpointsPerRun);
      } finally {
        await worker.stop();
      }
    }
  } finally {
    await model.server.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const ours = await agentqModelGraphFigures(context);
  for (const latencyMs of MODEL_LATENCIES_MS) {
    const suffix = latencyMs === 0 ? '' : `_${latencyMs}ms`;
    const steps = (prefix: string, inFlight: number) =>
      (prefix === 'engine_model' ? ours : figures)[modelFigure(prefix, 'steps_per_s', inFlight, latencyMs)]!;
    // Time per step is 1 / steps per second, so LangGraph's time ÷ ours is our rate ÷ theirs.
    record(`engine_vs_langgraph_sqlite_r1${suffix}`, steps('engine_model', 1) / steps('langgraph_sqlite', 1));
    record(`engine_vs_langgraph_sqlite_r100${suffix}`, steps('engine_model', 100) / steps('langgraph_sqlite', 100));
  }
  return figures;
}

export const langgraphSection: BenchSection = { name: 'langgraph', run: runLangGraph };
