/**
 * The worker process of the capacity, recovery and soak benchmarks: the built-in graphs plus
 * `parked-call` (one model call, then done) and `model-chain` (`steps` model calls in a row), config
 * from the environment. It reports to the parent
 * over IPC: `ready`, each finished run, and on request its heap, RSS, event-loop delay and the steps
 * it is running. Start it with `--expose-gc` so `stats` with `gc: true` measures what is retained.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { z } from 'zod';
import { loadConfig } from '../../shared/config/config.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import type { WorkerReply, WorkerRequest } from '../lib/bench-worker-process.js';

/** A run parked on one model call: the step holds its job (and a socket) until the model answers. */
const parkedCallGraph = defineGraph({
  name: 'parked-call',
  state: { answer: channel.replace('') },
  output: (state) => ({ answer: state.answer }),
})
  .node('ask', async (_state, context) => {
    const call = await callLanguageModel(context, {
      messages: [
        {
          role: 'user',
          content: `answer after a while (${context.runId} ${context.stepId} attempt ${context.attempt} pid ${process.pid} at ${Date.now()})`,
        },
      ],
    });
    return { answer: call.message.content ?? '' };
  })
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

/** `steps` model calls in a row; each prompt names its run and step, so the benchmark can count calls per step. */
const modelChainGraph = defineGraph({
  name: 'model-chain',
  input: z.object({ steps: z.number().int().min(1).max(10_000) }).strict(),
  state: { steps: channel.replace(0), next: channel.replace(0) },
  initialState: (input) => ({ steps: input.steps, next: 0 }),
  output: (state) => ({ steps: state.next }),
})
  .node('ask', async (state, context) => {
    await callLanguageModel(context, {
      messages: [
        {
          role: 'user',
          content: `step ${state.next} (${context.runId} ${context.stepId} attempt ${context.attempt} pid ${process.pid})`,
        },
      ],
    });
    return { next: state.next + 1 };
  })
  .edge(START, 'ask')
  .route('ask', (state) => (state.next < state.steps ? 'ask' : END), ['ask', END])
  .build();

const config = loadConfig();
// BENCH_CPU_PROF_DIR=<dir>: a CPU profile of this worker from its start to the benchmark's second `stats`
// request (capacity: all runs parked), written as <dir>/w<pid>.cpuprofile — the bench kills workers
// with SIGKILL, so node's own --cpu-prof would never write one.
const profiler = process.env.BENCH_CPU_PROF_DIR ? new Session() : undefined;
let statsRequests = 0;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
// Steps running here, by `<runId>/<superstep>`: what a SIGKILL would interrupt.
const running = new Map<string, { runId: string; superstep: number }>();
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
// Garbage-collection pauses since the previous `stats` request: a long one is an event-loop stall too.
let gcMaxMs = 0;
let gcTotalMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMaxMs = Math.max(gcMaxMs, entry.duration);
    gcTotalMs += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

const worker = await startWorker({
  config,
  graphs: [parkedCallGraph, modelChainGraph],
  logger: createLogger(config.logLevel, { role: 'bench-worker' }),
  observers: [
    {
      onNodeStart: ({ runId, superstep }) => void running.set(`${runId}/${superstep}`, { runId, superstep }),
      onNodeEnd: ({ runId, superstep }) => void running.delete(`${runId}/${superstep}`),
      onRunFinished: (runId, status) => send({ type: 'finished', runId, status }),
    },
  ],
});

function send(message: WorkerReply): void {
  if (process.connected) process.send?.(message);
}
// The benchmark that forked this process is gone (it crashed or was killed): nobody needs it any more.
process.once('disconnect', () => process.exit(0));

process.on('message', (message: WorkerRequest) => {
  if (message.type === 'stats') {
    statsRequests += 1;
    if (profiler && statsRequests === 2) {
      void profiler
        .post('Profiler.stop')
        .then(({ profile }) =>
          writeFileSync(`${process.env.BENCH_CPU_PROF_DIR}/w${process.pid}.cpuprofile`, JSON.stringify(profile)),
        );
    }
    if (message.gc) (globalThis as { gc?: () => void }).gc?.();
    const memory = process.memoryUsage();
    // The delay histogram counts from the previous `stats` request (nanoseconds → ms).
    const eldP99Ms = delay.count > 0 ? delay.percentile(99) / 1e6 : 0;
    const eldMaxMs = delay.count > 0 ? delay.max / 1e6 : 0;
    delay.reset();
    send({
      type: 'stats',
      heapUsed: memory.heapUsed,
      rss: memory.rss,
      eldP99Ms,
      eldMaxMs,
      gcMaxMs,
      gcTotalMs,
      running: [...running.values()],
    });
    gcMaxMs = 0;
    gcTotalMs = 0;
  }
  if (message.type === 'stop') void worker.close().then(() => process.exit(0));
});
send({ type: 'ready' });
