/**
 * A benchmark worker process: the built-in graphs and `bench-model` (bench/lib/model-graph.ts; it
 * calls the model at LLM_MODEL / OPENAI_BASE_URL), config from the environment. Reports each finished
 * run to the parent over IPC, and on request the node start/end times it observed (performance.now(),
 * one clock per process), so transitions can be measured to the microsecond.
 */
import { loadConfig } from '../../shared/config.js';
import type { StepObservation } from '../../shared/graph/step-observer.js';
import { createLogger } from '../../shared/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { inlineChainGraph } from '../lib/inline-chain-graph.js';
import { benchModelGraph } from '../lib/model-graph.js';
import { answerMeterRequests } from '../lib/process-meter.js';
import type { StepTiming } from '../lib/step-timings.js';

answerMeterRequests();
const observations = new Map<string, StepTiming[]>();
// Recording costs the worker (objects kept per step): the steps section turns it off for its throughput rounds.
let record = process.env.BENCH_RECORD_STEPS === 'true';
const config = loadConfig();
const worker = await startWorker({
  config,
  graphs: [benchModelGraph, inlineChainGraph],
  logger: createLogger('error'),
  reconciler: false,
  observers: [
    {
      onNodeEnd(observation: StepObservation) {
        if (!record) return;
        const list = observations.get(observation.runId) ?? [];
        list.push({ superstep: observation.superstep, startedAt: observation.startedAt, endedAt: observation.endedAt! });
        observations.set(observation.runId, list);
      },
      onRunFinished(runId, status) {
        process.send?.({ type: 'finished', runId, status });
      },
    },
  ],
});
process.on('message', (message: { type: string; runIds?: string[]; on?: boolean }) => {
  if (message.type === 'record') {
    record = message.on === true;
    if (!record) observations.clear();
  }
  if (message.type === 'observations') {
    const wanted = Object.fromEntries((message.runIds ?? []).map((runId) => [runId, observations.get(runId) ?? []]));
    process.send?.({ type: 'observations', observations: wanted });
  }
  if (message.type === 'stop') void worker.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready' });
