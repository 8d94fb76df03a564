/**
 * A benchmark worker process: the built-in graphs and `bench-model` (bench/lib/model-graph.ts; it
 * calls the model at LLM_MODEL / OPENAI_BASE_URL), config from the environment. Reports each finished
 * run to the parent over IPC, and on request the node start/end times it observed (performance.now(),
 * one clock per process), so transitions can be measured to the microsecond.
 */
import { loadConfig } from '../../shared/config/config.js';
import type { StepObservation, StepObserver } from '../../shared/graph/step-observer.js';
import { createLogger } from '../../shared/telemetry/logger.js';
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
const recordNodeEnd = (observation: StepObservation) => {
  const list = observations.get(observation.runId) ?? [];
  list.push({ superstep: observation.superstep, startedAt: observation.startedAt, endedAt: observation.endedAt! });
  observations.set(observation.runId, list);
};
// onNodeEnd is set only while recording: a worker with no node observer makes no observations at all.
const observer: StepObserver = {
  onRunFinished(runId, status) {
    process.send?.({ type: 'finished', runId, status });
  },
};
const setRecording = (on: boolean) => {
  record = on;
  if (on) observer.onNodeEnd = recordNodeEnd;
  else {
    delete observer.onNodeEnd;
    observations.clear();
  }
};
setRecording(record);
const worker = await startWorker({
  config,
  graphs: [benchModelGraph, inlineChainGraph],
  logger: createLogger('error'),
  reconciler: false,
  observers: [observer],
});
process.on('message', (message: { type: string; runIds?: string[]; on?: boolean }) => {
  if (message.type === 'record') setRecording(message.on === true);
  if (message.type === 'observations') {
    const wanted = Object.fromEntries((message.runIds ?? []).map((runId) => [runId, observations.get(runId) ?? []]));
    process.send?.({ type: 'observations', observations: wanted });
  }
  if (message.type === 'stop') void worker.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready' });
