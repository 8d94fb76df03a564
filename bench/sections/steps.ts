/**
 * The `steps` section: what a step costs. Runs the `chain` graph (sleepMs 0) on one worker process
 * beside a plain BullMQ job chain (each job adds the next, no state) and an in-process loop (one Redis
 * write per step), on one Redis, with telemetry off and on; then the model-calling graph
 * (bench/lib/model-graph-figures.ts) at 1/10/100 runs in flight with 0 ms and 200 ms model latency.
 */
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { closedLoop } from '../lib/closed-loop.js';
import { chainLoop as bullmqChainLoop } from '../lib/bullmq-chain.js';
import { engineLoop, recordStepTimings, stepTimingsOf } from '../lib/engine-loop.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { forkWorker, type ForkedWorker } from '../lib/forked-worker.js';
import { agentqModelGraphFigures } from '../lib/model-graph-figures.js';
import { commandStats, commandTotals, perCommandDelta } from '../lib/redis-commandstats.js';
import { installCommandCounter, readMeter, redisCpuUs, type MeterReading } from '../lib/process-meter.js';
import { percentile } from '../lib/stats.js';
import { transitions } from '../lib/step-timings.js';
import { startTraceSink } from '../lib/trace-sink.js';

const STEPS = 10;
const CONCURRENCY = 100;
/** Turns of engine and plain chain at 100 in flight (medians compared). */
const ROUNDS = 5;

const chainLoop = (worker: ForkedWorker, queue: Queue, inFlight: number, total: number) =>
  bullmqChainLoop(worker, queue, { inFlight, total, length: STEPS });

/** CPU and client commands of one measured stretch: worker process, this (producer) process, Redis. */
interface Spend {
  workerCpuUs: number;
  producerCpuUs: number;
  redisCpuUs: number;
  workerCommands: number;
  producerCommands: number;
}

/** Runs `work` and reports what the worker, this process and Redis spent on it. */
async function metered<T>(
  worker: ForkedWorker,
  redis: Redis,
  work: () => Promise<T>,
): Promise<{ result: T; spend: Spend }> {
  const workerMeter = () => worker.request<MeterReading>({ type: 'meter' }, 'meter');
  const [workerBefore, redisBefore] = [await workerMeter(), await redisCpuUs(redis)];
  const producerBefore = readMeter();
  const result = await work();
  const producerAfter = readMeter();
  const [workerAfter, redisAfter] = [await workerMeter(), await redisCpuUs(redis)];
  return {
    result,
    spend: {
      workerCpuUs: workerAfter.cpuUs - workerBefore.cpuUs,
      producerCpuUs: producerAfter.cpuUs - producerBefore.cpuUs,
      redisCpuUs: redisAfter - redisBefore,
      workerCommands: workerAfter.commands - workerBefore.commands,
      // The two meter requests' INFO calls are this process's too.
      producerCommands: producerAfter.commands - producerBefore.commands,
    },
  };
}

function median(values: number[]): number {
  return percentile(values, 50);
}

async function runSteps(context: BenchContext): Promise<BenchFigures> {
  const { redisUrl, quick, log } = context;
  // `-- --compare`: only the alternating engine/chain rounds at 100 in flight (what a change to the hot
  // path is judged by), with the Redis commands of each side's first round broken down per command.
  const compareOnly = process.argv.includes('--compare');
  // BENCH_CPU_PROF_DIR: the engine worker writes a V8 CPU profile there when it stops (node --cpu-prof).
  const profDir = process.env.BENCH_CPU_PROF_DIR;
  const totals = { r1: quick ? 10 : 40, r10: quick ? 40 : 200, r100: quick ? 200 : 1000 };
  const { figures, record } = figureRecorder(log);
  installCommandCounter();
  log(`${STEPS}-step chains, worker concurrency ${CONCURRENCY}`);
  const redis = new Redis(redisUrl);
  const id = randomBytes(3).toString('hex');
  const baseEnv = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `bench${id}`,
    AGENTQ_QUEUE_PREFIX: `benchq${id}`,
    AGENTQ_WORKER_CONCURRENCY: String(CONCURRENCY),
    AGENTQ_LOG_LEVEL: 'error',
    AGENTQ_RETENTION_SECONDS: '600',
    OTEL_TRACES_EXPORTER: 'none',
    // A step with and without its recording (`AGENTQ_RECORDING=off npm run bench:steps -- --compare`).
    AGENTQ_RECORDING: process.env.AGENTQ_RECORDING ?? 'full',
  };
  const client = new AgentClient({ config: loadConfig(baseEnv) });
  const chainQueue = new Queue('bench-chain', { connection: { url: redisUrl }, prefix: baseEnv.AGENTQ_QUEUE_PREFIX });
  const chainRun = (worker: ForkedWorker, inFlight: number, total: number, input: object = { steps: STEPS }) =>
    engineLoop(worker, client, { graph: 'chain', input, inFlight, total });
  const workers: ForkedWorker[] = [];
  const start = async (script: string, env: Record<string, string>, execArgv: string[] = []) => {
    const worker = await forkWorker(script, env, { execArgv });
    workers.push(worker);
    return worker;
  };
  try {
    // --- agentq, telemetry off
    log('agentq engine (telemetry off)');
    const engine = await start(
      'bench/workers/engine-worker.ts',
      { ...baseEnv, BENCH_RECORD_STEPS: compareOnly ? 'false' : 'true' },
      profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    );
    await chainRun(engine, 10, 20);
    if (!compareOnly) {
      const r1 = await chainRun(engine, 1, totals.r1);
      record('engine_steps_per_s_r1', (totals.r1 * STEPS) / (r1.elapsedMs / 1000));
      const r1Transitions = (await stepTimingsOf(engine, r1.runIds)).flatMap((list) =>
        transitions(list).filter((value) => value !== undefined),
      );
      record('engine_transition_p50_ms_r1', percentile(r1Transitions, 50));
      record('engine_transition_p95_ms_r1', percentile(r1Transitions, 95));
      const r10 = await chainRun(engine, 10, totals.r10);
      record('engine_steps_per_s_r10', (totals.r10 * STEPS) / (r10.elapsedMs / 1000));
      // A 200-step run whose history grows by one message per step: does a step cost more late than early?
      // Nine runs, one at a time: a transition takes 0.3-1 ms, and with three runs (30 samples a side) two
      // benchmark runs of the same code gave 1.07 and 1.40.
      const growth = await chainRun(engine, 1, quick ? 1 : 9, { steps: 200, appendMessages: true });
      const early: number[] = [];
      const late: number[] = [];
      for (const list of await stepTimingsOf(engine, growth.runIds)) {
        const values = transitions(list);
        early.push(...values.slice(0, 10));
        late.push(...values.slice(189, 199));
      }
      record('transition_growth_200', percentile(late, 50) / percentile(early, 50));
      // The throughput rounds below must not pay for keeping every step's timings.
      recordStepTimings(engine, false);
    }
    const r100Steps = totals.r100 * STEPS;

    // --- agentq against a plain BullMQ chain at 100 in flight, telemetry off. This machine's speed drifts
    // by ±20% within a minute, so the two take turns (A B A B A B, both worker processes up, the idle one
    // blocked on Redis) and the medians are compared; the spread of the rounds' ratios is reported too.
    const rounds = quick ? 1 : ROUNDS;
    log(`agentq engine and plain BullMQ job chain, ${rounds} rounds each, in turns (telemetry off)`);
    const chain = await start('bench/workers/bullmq-chain-worker.ts', baseEnv);
    // The same warm-up for both sides, at the measured load, so neither side's first measured round is
    // its JIT's (the chain used to get 20 runs and then its slowest round first).
    await chainRun(engine, CONCURRENCY, totals.r100 / 2);
    await chainLoop(chain, chainQueue, CONCURRENCY, totals.r100 / 2);
    const engineRates: number[] = [];
    const chainRates: number[] = [];
    const engineSpends: Spend[] = [];
    const chainSpends: Spend[] = [];
    const measureEngine = async () => {
      const before = await commandTotals(redis);
      const statsBefore = await commandStats(redis);
      const { result, spend } = await metered(engine, redis, () => chainRun(engine, CONCURRENCY, totals.r100));
      const after = await commandTotals(redis);
      if (engineRates.length === 0) {
        record('redis_calls_per_step', (after.calls - before.calls) / r100Steps);
        record('redis_usec_per_step', (after.usec - before.usec) / r100Steps);
        if (compareOnly) {
          for (const [command, delta] of perCommandDelta(statsBefore, await commandStats(redis))) {
            log(
              `  ${command}: ${(delta.calls / r100Steps).toFixed(2)} calls, ${(delta.usec / r100Steps).toFixed(1)} µs per step`,
            );
          }
        }
      }
      engineRates.push(r100Steps / (result.elapsedMs / 1000));
      engineSpends.push(spend);
    };
    // Inline nodes: the same shape with every other node inline (bench/lib/inline-chain-graph.ts).
    const inlineRates: number[] = [];
    const inlineSpends: Spend[] = [];
    const measureInline = async () => {
      const { result, spend } = await metered(engine, redis, () =>
        engineLoop(engine, client, {
          graph: 'bench-chain-inline',
          input: { steps: STEPS },
          inFlight: CONCURRENCY,
          total: totals.r100,
        }),
      );
      inlineRates.push(r100Steps / (result.elapsedMs / 1000));
      inlineSpends.push(spend);
    };
    await engineLoop(engine, client, {
      graph: 'bench-chain-inline',
      input: { steps: STEPS },
      inFlight: CONCURRENCY,
      total: totals.r100 / 2,
    });
    const measureChain = async () => {
      const statsBefore = compareOnly && chainRates.length === 0 ? await commandStats(redis) : undefined;
      const { result, spend } = await metered(chain, redis, () =>
        chainLoop(chain, chainQueue, CONCURRENCY, totals.r100),
      );
      // The chain's side of the engine's breakdown above: which of the engine's commands the chain pays too.
      if (statsBefore) {
        for (const [command, delta] of perCommandDelta(statsBefore, await commandStats(redis))) {
          log(
            `  chain ${command}: ${(delta.calls / r100Steps).toFixed(2)} calls, ${(delta.usec / r100Steps).toFixed(1)} µs per step`,
          );
        }
      }
      chainRates.push(r100Steps / (result / 1000));
      chainSpends.push(spend);
    };
    for (let round = 0; round < rounds; round += 1) {
      // Who goes first alternates: a drift of the machine's speed within a round favours neither side.
      if (round % 2 === 0) {
        await measureEngine();
        await measureChain();
        await measureInline();
      } else {
        await measureInline();
        await measureChain();
        await measureEngine();
      }
      log(
        `  round ${round + 1}: engine ${engineRates[round]!.toFixed(0)}, chain ${chainRates[round]!.toFixed(0)}, engine with inline nodes ${inlineRates[round]!.toFixed(0)} steps/s`,
      );
    }
    const perStep = (spends: Spend[], pick: (spend: Spend) => number) =>
      median(spends.map((spend) => pick(spend) / r100Steps));
    for (const [side, spends] of [
      ['engine', engineSpends],
      ['bullmq_chain', chainSpends],
      ['engine_inline', inlineSpends],
    ] as const) {
      record(
        `${side}_cpu_us_per_step`,
        perStep(spends, (spend) => spend.workerCpuUs + spend.producerCpuUs + spend.redisCpuUs),
      );
      record(
        `${side}_cpu_us_per_step_worker`,
        perStep(spends, (spend) => spend.workerCpuUs),
      );
      record(
        `${side}_cpu_us_per_step_redis`,
        perStep(spends, (spend) => spend.redisCpuUs),
      );
      record(
        `${side}_cpu_us_per_step_producer`,
        perStep(spends, (spend) => spend.producerCpuUs),
      );
      record(
        `${side}_worker_cmds_per_step`,
        perStep(spends, (spend) => spend.workerCommands),
      );
      record(
        `${side}_producer_cmds_per_step`,
        perStep(spends, (spend) => spend.producerCommands),
      );
    }
    // What the issue calls redis_cmds_per_step: the client commands a step's worker sends (a script's
    // own calls inside Redis are not round trips; redis_calls_per_step above counts those).
    record('redis_cmds_per_step', figures.engine_worker_cmds_per_step!);
    record('engine_cpu_vs_bullmq_chain_r100', figures.engine_cpu_us_per_step! / figures.bullmq_chain_cpu_us_per_step!);
    record('engine_steps_per_s_r100', percentile(engineRates, 50));
    record('bullmq_chain_steps_per_s_r100', percentile(chainRates, 50));
    record('engine_inline_steps_per_s_r100', percentile(inlineRates, 50));
    record('engine_inline_vs_bullmq_chain_r100', percentile(inlineRates, 50) / percentile(chainRates, 50));
    const roundRatios = engineRates.map((rate, round) => rate / chainRates[round]!);
    record('engine_vs_bullmq_chain_r100_min', Math.min(...roundRatios));
    record('engine_vs_bullmq_chain_r100_max', Math.max(...roundRatios));
    await engine.stop();
    await chain.stop();
    if (compareOnly) {
      record('engine_vs_bullmq_chain_r100', figures.engine_steps_per_s_r100! / figures.bullmq_chain_steps_per_s_r100!);
      return figures;
    }

    // --- the same graph as a plain in-process loop, one Redis write per step
    log('in-process loop, one Redis write per step');
    const loopMs = await new Promise<number>((resolve, reject) => {
      const loop = closedLoop(100, totals.r100, async (index) => {
        const key = `bench${id}:loop:${index}`;
        for (let step = 0; step < STEPS; step += 1) await redis.rpush(key, step);
        await redis.del(key);
        loop.finished();
      });
      loop.done.then(resolve, reject);
    });
    record('inprocess_steps_per_s_r100', (totals.r100 * STEPS) / (loopMs / 1000));
    record('engine_vs_bullmq_chain_r100', figures.engine_steps_per_s_r100! / figures.bullmq_chain_steps_per_s_r100!);

    // --- telemetry on, both sides (spans exported over OTLP/HTTP to a sink on loopback)
    log('telemetry on: agentq engine and BullMQ chain with bullmq-otel, spans exported to a local OTLP sink');
    const sink = await startTraceSink();
    try {
      const otelEnv = { ...baseEnv, OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
      const engineOtel = await start('bench/workers/engine-worker.ts', otelEnv);
      await chainRun(engineOtel, 10, 20);
      const r100Otel = await chainRun(engineOtel, 100, totals.r100);
      record('engine_steps_per_s_r100_otel', (totals.r100 * STEPS) / (r100Otel.elapsedMs / 1000));
      await engineOtel.stop();
      const chainOtel = await start('bench/workers/bullmq-chain-worker.ts', otelEnv);
      await chainLoop(chainOtel, chainQueue, 10, 20);
      const chainOtelMs = await chainLoop(chainOtel, chainQueue, 100, totals.r100);
      record('bullmq_chain_steps_per_s_r100_otel', (totals.r100 * STEPS) / (chainOtelMs / 1000));
      await chainOtel.stop();
    } finally {
      await sink.close();
    }
    record(
      'engine_vs_bullmq_chain_r100_otel',
      figures.engine_steps_per_s_r100_otel! / figures.bullmq_chain_steps_per_s_r100_otel!,
    );
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await client.close();
    await chainQueue.close();
    redis.disconnect();
  }
  // --- the model-calling graph (shared with the langgraph section, which compares against it)
  return { ...figures, ...(await agentqModelGraphFigures(context)) };
}

export const stepsSection: BenchSection = { name: 'steps', run: runSteps };
