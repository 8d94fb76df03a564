/**
 * `npm run bench` section "capacity": 10,000 runs (1,000 with --quick) parked at once on a
 * model call, on 2 worker processes, against the real `openai` SDK and the scripted OpenAI server.
 *
 * To have every run parked at the same moment (so memory can be measured), the scripted server holds
 * each chat request until all N have arrived, takes the measurements, then answers each one 2 s later:
 * every run is parked at least 2 s, and all of them at once while measured.
 *
 * Figures:
 * - `inflight_N_ok`: 1 when every run completed, else 0 (`inflight_10000_ok` at full size).
 * - `redis_bytes_per_inflight_run`: Redis `used_memory` with all N parked minus before they were
 *   enqueued, ÷ N. It includes everything a parked run holds in Redis: the run's keys (meta, state,
 *   events, steps, memo; there is no history, the graph keeps none), its entries in the active-runs and
 *   tenant indexes, its active BullMQ step job (hash, lock, active-list entry) and whatever is left of its
 *   intake job (removed on completion). History is aside: the run has none.
 * - `redis_bytes_per_finished_run`: the same delta after all N completed, before retention expiry
 *   (finished run keys, index entries; BullMQ keeps only the newest AGENTQ_KEEP_COMPLETED_JOBS completed
 *   step jobs, so that part does not grow with N).
 * - `event_loop_delay_p99_ms` / `event_loop_delay_max_ms`: the workers' event-loop delay (perf_hooks
 *   monitorEventLoopDelay) from the warm-up until all N were parked, the worse worker's.
 * - `redis_record_bytes_per_finished_run` / `record_json_bytes_per_finished_run`: MEMORY USAGE of a
 *   finished run's recording key (AGENTQ_RECORDING; 0 when off), part of the figure above, and the JSON bytes
 *   it counts against AGENTQ_RECORDING_MAX_BYTES; the mean of the first 200 runs.
 * - `heap_bytes_per_inflight_run`: per worker, heapUsed after a forced full GC with its runs parked minus
 *   before, ÷ the steps it was running; the mean of the two workers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { bullmqQueueKeys } from '../../shared/bullmq/bullmq-keys.js';
import { jobLockKey } from '../../shared/bullmq/bullmq-jobs.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { startScriptedOpenAIServer, type ScriptedResponse } from '../../test/fakes/scripted-openai-server.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { Keys } from '../../shared/store/keys.js';
import { shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { startPrivateRedis } from '../../shared/redis/private-redis-server.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { forkBenchWorker, type BenchWorker } from '../lib/bench-worker-process.js';
import { benchEnv, enqueueAll, usedMemory, waitFor } from '../lib/bench-runs.js';
import { round } from '../lib/stats.js';

const MODEL_DELAY_MS = 2000;
const WARMUP_RUNS = 50;

export const capacitySection: BenchSection = {
  name: 'capacity',
  async run({ quick, log }: BenchContext): Promise<BenchFigures> {
    const runs = quick ? 1000 : 10_000;
    checkFileLimit(runs);
    const dataDir = mkdtempSync(join(tmpdir(), 'agentq-capacity-'));
    // A redis-server of its own: nothing else writes to it, so used_memory deltas are this section's.
    const redisServer = await startPrivateRedis({ appendonly: true, dir: dataDir });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const model = await startScriptedOpenAIServer({
      script: async (): Promise<ScriptedResponse> => {
        if (holding) await gate;
        return { content: 'done', delayMs: MODEL_DELAY_MS };
      },
    });
    const env = benchEnv(redisServer.url, {
      // Each worker can hold more than half the runs, so both together hold all of them whatever the split.
      AGENTQ_WORKER_CONCURRENCY: String(Math.ceil((runs / 2) * 1.1)),
      LLM_MODEL: 'scripted-chat',
      OPENAI_BASE_URL: model.url,
      // The gate holds the first calls until the last run is parked: far longer than 2 s on purpose.
      AGENTQ_LLM_TIMEOUT_MS: '600000',
      // The enqueue of 200 runs at a time on a loaded 2-core machine can pass the producer's 750 ms command
      // timeout (a refused enqueue, not a slow Redis): this section measures memory, not latency.
      AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '10000',
      // Measured with and without the recording (`AGENTQ_RECORDING=off npm run bench -- --only capacity`).
      AGENTQ_RECORDING: process.env.AGENTQ_RECORDING ?? 'full',
    });
    const redis = new Redis(redisServer.url);
    const client = new AgentClient({ config: loadConfig(env) });
    const workers: BenchWorker[] = [];
    const started = Date.now();
    try {
      workers.push(...(await Promise.all([forkBenchWorker(env), forkBenchWorker(env)])));
      const finished = new Map<string, string>();
      for (const worker of workers) worker.onFinished((runId, status) => finished.set(runId, status ?? 'unknown'));

      log(`capacity: warm-up, ${WARMUP_RUNS} runs`);
      const warm = await enqueueAll(client, WARMUP_RUNS, () => ({ graph: 'parked-call', input: {} }));
      await waitFor(() => warm.every((id) => finished.has(id)), 120_000, 'the warm-up runs to finish', log);

      const heapBefore = await Promise.all(workers.map((worker) => worker.stats({ gc: true })));
      const redisBefore = await usedMemory(redis);
      holding = true;
      log(`capacity: enqueueing ${runs} runs of parked-call (model answers 2 s after all are parked)`);
      const ids = await enqueueAll(client, runs, () => ({ graph: 'parked-call', input: {} }));
      const pending = () => model.chatRequests().filter((request) => request.outcome === 'pending').length;
      const failedEarly = () => {
        const failed = [...finished.values()].filter((status) => status !== 'completed').length;
        if (failed > 0) throw new Error(`${failed} runs failed before all were parked (the worker logs say why)`);
      };
      await waitFor(
        () => (failedEarly(), pending() >= runs),
        900_000,
        `all ${runs} model calls to be in flight`,
        log,
        () => `${pending()} of ${runs} parked`,
      );

      const redisParked = await usedMemory(redis);
      const heapParked = await Promise.all(workers.map((worker) => worker.stats({ gc: true })));
      const perWorker = heapParked.map((stats, index) => ({
        runs: stats.running.length,
        bytesPerRun: (stats.heapUsed - heapBefore[index]!.heapUsed) / Math.max(1, stats.running.length),
      }));
      log(
        `capacity: parked ${perWorker.map((worker) => worker.runs).join(' + ')} steps; heap/run ${perWorker.map((worker) => Math.round(worker.bytesPerRun)).join(', ')} B; ` +
          `event-loop delay while parking max ${heapParked.map((stats) => Math.round(stats.eldMaxMs)).join(', ')} ms; ` +
          `GC pauses max ${heapParked.map((stats) => Math.round(stats.gcMaxMs)).join(', ')} ms, total ${heapParked.map((stats) => Math.round(stats.gcTotalMs)).join(', ')} ms`,
      );
      log(`capacity: one parked run's keys: ${JSON.stringify(await runFootprint(redis, env, ids[0]!))}`);

      holding = false;
      release();
      await waitFor(
        () => ids.every((id) => finished.has(id)),
        600_000,
        `all ${runs} runs to finish`,
        log,
        () => `${ids.filter((id) => finished.has(id)).length} of ${runs} finished`,
      );
      const redisFinished = await usedMemory(redis);
      const recordBytes = await recordingFootprint(redis, env, ids.slice(0, 200));
      const completed = ids.filter((id) => finished.get(id) === 'completed').length;
      // A step taken again while its first delivery still waits on the model asks the model twice.
      const duplicateCalls = model.chatRequests().length - WARMUP_RUNS - runs;
      log(
        `capacity: ${completed} of ${runs} completed in ${round((Date.now() - started) / 1000, 1)} s; ${duplicateCalls} model calls beyond one per run`,
      );
      if (duplicateCalls > 0) {
        // Which kind: a call abandoned by its client (the step failed and was retried) or two answered calls.
        const outcomes = new Map<string, number>();
        for (const request of model.chatRequests())
          outcomes.set(request.outcome, (outcomes.get(request.outcome) ?? 0) + 1);
        const retried = (await Promise.all(ids.slice(0, 2000).map((id) => client.store.reads.steps(id)))).filter(
          (steps) => steps.some((step) => step.attempts > 1),
        ).length;
        log(
          `capacity: model requests by outcome ${JSON.stringify(Object.fromEntries(outcomes))}; of the first 2000 runs, ${retried} had a step attempt > 1`,
        );
        const byRun = new Map<string, number>();
        for (const request of model.chatRequests()) {
          const text = JSON.stringify(request.body);
          const runId = /\((run_[0-9a-f]+) /.exec(text)?.[1] ?? '?';
          byRun.set(runId, (byRun.get(runId) ?? 0) + 1);
        }
        const twice = [...byRun.entries()].filter(([, count]) => count > 1).slice(0, 3);
        for (const [runId] of twice) {
          const events = await client.store.eventLog.events(runId);
          log(
            `capacity: run ${runId} asked ${byRun.get(runId)} times; events ${events.map((event) => event.type).join(',')}`,
          );
          log(
            `  requests: ${model
              .chatRequests()
              .filter((request) => JSON.stringify(request.body).includes(runId))
              .map(
                (request) =>
                  `${request.outcome} ${/attempt.*?\)/.exec(JSON.stringify(request.body))?.[0]} arrived ${request.receivedAt}`,
              )
              .join(' | ')}`,
          );
        }
      }
      return {
        [`inflight_${runs}_ok`]: completed === runs ? 1 : 0,
        redis_bytes_per_inflight_run: Math.round((redisParked - redisBefore) / runs),
        redis_bytes_per_finished_run: Math.round((redisFinished - redisBefore) / runs),
        // The recording's own key (AGENTQ_RECORDING), part of the figure above; 0 when off.
        redis_record_bytes_per_finished_run: recordBytes.memory,
        record_json_bytes_per_finished_run: recordBytes.json,
        heap_bytes_per_inflight_run: Math.round(
          perWorker.reduce((sum, worker) => sum + worker.bytesPerRun, 0) / perWorker.length,
        ),
        capacity_duplicate_model_calls: duplicateCalls,
        // The workers' event loops while 10,000 runs arrived and parked: the worst of the two.
        event_loop_delay_p99_ms: Math.round(Math.max(...heapParked.map((stats) => stats.eldP99Ms))),
        event_loop_delay_max_ms: Math.round(Math.max(...heapParked.map((stats) => stats.eldMaxMs))),
        // The longest garbage-collection pause in that time (a stall of its own, not the application's).
        gc_pause_max_ms: Math.round(Math.max(...heapParked.map((stats) => stats.gcMaxMs))),
      };
    } finally {
      release();
      await Promise.all(workers.map((worker) => worker.kill()));
      await client.close();
      redis.disconnect();
      await model.close();
      await redisServer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

/**
 * This process holds one socket per parked model call (the scripted server), each worker half as many:
 * with a small open-file limit the server stops accepting (EMFILE) and calls fail with "fetch failed".
 * Say so before starting rather than after.
 */
function checkFileLimit(runs: number): void {
  const limit = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  const needed = runs + 1000;
  if (Number.isFinite(limit) && limit < needed) {
    throw new Error(
      `capacity needs about ${needed} open files (one socket per parked model call), but ulimit -n is ${limit}: run \`ulimit -n ${needed}\` first`,
    );
  }
}

/** MEMORY USAGE of one parked run's own keys and of its step job (what the per-run figure is made of). */
async function runFootprint(redis: Redis, env: Record<string, string>, runId: string): Promise<Record<string, number>> {
  const shards = Number(env.AGENTQ_SHARDS ?? 1);
  const base = new Keys(env.AGENTQ_KEY_PREFIX, shards).run(runId).meta.replace(/:meta$/, '');
  const queue = bullmqQueueKeys(stepQueuePrefix(env.AGENTQ_QUEUE_PREFIX!, shardOf(runId, shards), shards), STEP_QUEUE);
  const job = `${queue.prefix}${runId}.s0.t0`;
  const keys: Record<string, string> = {
    meta: `${base}:meta`,
    state: `${base}:state`,
    events: `${base}:events`,
    steps: `${base}:steps`,
    memo: `${base}:memo`,
    record: `${base}:record`,
    stepJob: job,
    stepJobLock: jobLockKey(job),
  };
  const usage: Record<string, number> = {};
  for (const [name, key] of Object.entries(keys))
    usage[name] = Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  return usage;
}

/** Mean MEMORY USAGE of the recording key of finished runs and the JSON bytes it counts (its `bytes`). */
async function recordingFootprint(
  redis: Redis,
  env: Record<string, string>,
  runIds: string[],
): Promise<{ memory: number; json: number }> {
  const keys = new Keys(env.AGENTQ_KEY_PREFIX, Number(env.AGENTQ_SHARDS ?? 1));
  let memory = 0;
  let json = 0;
  for (const runId of runIds) {
    const key = keys.run(runId).record;
    memory += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    json += Number((await redis.hget(key, 'bytes')) ?? 0);
  }
  return {
    memory: Math.round(memory / Math.max(1, runIds.length)),
    json: Math.round(json / Math.max(1, runIds.length)),
  };
}
