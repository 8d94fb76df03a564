/**
 * `npm run bench:model-step -- [--root <checkout>]... [--rounds N] [--runs N] [--commands] [--cpu-prof <dir>]
 * [--alloc-prof <dir> [--heap-prof]] [--env NAME=VALUE]...`:
 * what agentq's own work costs per model step, beside a plain BullMQ job chain making the same model call
 * (bench/workers/bullmq-model-chain-worker.ts), both on the 10-node model graph's request (bench/lib/model-graph.ts)
 * through agentq's OpenAI adapter and the real SDK to one scripted model answering at once.
 *
 * Each checkout given with `--root` (default: this one) runs its own `bench/workers/engine-worker.ts`; all sides
 * share one private redis-server (AOF everysec) and one scripted model, and take turns round by round (the
 * order rotating, so each side runs in each place), so a before/after comparison is made in the same period
 * of a busy machine. Per side:
 *  - r100: 100 runs in flight, steps/s, CPU µs per step of the worker process and of redis-server, the client
 *    commands the worker sent per step and the calls Redis ran per step (scripts' own calls included);
 *  - r1: one run at a time, wall ms per step and the step body's p50 (agentq: node start to end, the model call
 *    with its claim and memo; the chain: the job's body, the model call and the next job's add).
 * Ratios are of the same rounds' medians: agentq ÷ chain. `--commands` prints Redis's calls per step by
 * command (first round); `--cpu-prof <dir>` writes a V8 CPU profile of each worker over its first r100
 * round (cpu-profile-on-signal.mjs); `--alloc-prof <dir>` counts the bytes each worker's heap allocates over
 * that round (alloc-on-signal.mjs; printed as `…_kb_allocated_per_step`), and with `--heap-prof` writes a
 * sampling heap profile of it too. `--env NAME=VALUE` sets an agentq setting for every agentq side (its worker
 * and the client that creates its runs), e.g. `--env AGENTQ_RECORDING=off` for what the recording costs.
 * Figures go to stdout as `name=value`, progress to stderr.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { AgentClient } from '../producer/client/agent-client.js';
import { loadConfig } from '../shared/config/config.js';
import { openBenchRedis } from './lib/bench-redis.js';
import { chainLoop } from './lib/bullmq-chain.js';
import { argValues } from './lib/cli-args.js';
import { engineLoop, recordStepTimings, stepTimingsOf } from './lib/engine-loop.js';
import { forkWorker, type ForkedWorker } from './lib/forked-worker.js';
import { MODEL_GRAPH_MODEL, MODEL_GRAPH_NAME, MODEL_GRAPH_NODES } from './lib/model-graph.js';
import { startBenchModel } from './lib/model-graph-figures.js';
import { commandStats, perCommandDelta } from './lib/redis-commandstats.js';
import { redisCpuUs, type MeterReading } from './lib/process-meter.js';
import { percentile, round } from './lib/stats.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);
const args = process.argv.slice(2);
const values = (name: string) => argValues(name, args);
const roots = values('--root').map((root) => resolve(root));
if (roots.length === 0) roots.push(here);
const rounds = Number(values('--rounds')[0] ?? 3);
const r100Runs = Number(values('--runs')[0] ?? 200);
const r1Runs = Number(values('--r1-runs')[0] ?? 10);
const profileDir = values('--cpu-prof')[0];
const allocDir = values('--alloc-prof')[0];
/** Whether the first r100 round is profiled (SIGUSR2 to the worker before and after it). */
const profiling = !!(profileDir ?? allocDir);
const IN_FLIGHT = 100;
/** `--env NAME=VALUE` (repeatable): settings of every agentq side, its worker's and its runs' (what a feature costs). */
const agentqEnv = Object.fromEntries(
  values('--env').map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env ${pair}: expected NAME=VALUE, e.g. --env AGENTQ_RECORDING=off`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

/** One side of the comparison: an agentq checkout's worker, or the chain. */
interface Side {
  name: string;
  worker: ForkedWorker;
  /** Runs `runs` runs, `inFlight` at once; → elapsed ms. */
  loop(inFlight: number, runs: number): Promise<number>;
  /** After an r1 loop: the step bodies' ms. */
  bodies(): Promise<number[]>;
  r100: Measure[];
  r1: { wallMsPerStep: number; bodyP50: number }[];
  /** Heap bytes the worker allocated per step, and its GC's µs per step, over the first r100 round (`--alloc-prof`). */
  allocated?: { bytesPerStep: number; gcUsPerStep: number };
}

interface Measure {
  stepsPerS: number;
  workerCpuUs: number;
  redisCpuUs: number;
  workerCommands: number;
  redisCalls: number;
}

/** Node options that preload the profilers a SIGUSR2 starts and stops (with `--cpu-prof`, `--alloc-prof`). */
function profileExecArgv(): string[] {
  const preload = (file: string) => ['--import', pathToFileURL(join(here, 'bench/lib', file)).href];
  return [
    ...(profileDir ? preload('cpu-profile-on-signal.mjs') : []),
    ...(allocDir ? preload('alloc-on-signal.mjs') : []),
  ];
}

/** The profilers' environment: where they write. */
function profileEnv(): Record<string, string> {
  return {
    ...(profileDir ? { AGENTQ_CPU_PROFILE_DIR: resolve(profileDir) } : {}),
    ...(allocDir ? { AGENTQ_ALLOC_PROFILE_DIR: resolve(allocDir) } : {}),
    ...(allocDir && args.includes('--heap-prof') ? { AGENTQ_HEAP_PROFILE: '1' } : {}),
  };
}

async function agentqSide(root: string, index: number, redisUrl: string, modelUrl: string): Promise<Side> {
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `mstep${id}`,
    AGENTQ_QUEUE_PREFIX: `mstepq${id}`,
    AGENTQ_WORKER_CONCURRENCY: String(IN_FLIGHT),
    AGENTQ_LOG_LEVEL: 'error',
    AGENTQ_RETENTION_SECONDS: '600',
    OTEL_TRACES_EXPORTER: 'none',
    OPENAI_BASE_URL: modelUrl,
    OPENAI_API_KEY: 'bench',
    LLM_MODEL: MODEL_GRAPH_MODEL,
    BENCH_RECORD_STEPS: 'false',
    ...profileEnv(),
    ...agentqEnv,
  };
  const worker = await forkWorker('bench/workers/engine-worker.ts', env, { root, execArgv: profileExecArgv() });
  const client = new AgentClient({ config: loadConfig(env) });
  let lastRunIds: string[] = [];
  return {
    name: `agentq${index}:${basename(root)}`,
    worker,
    async loop(inFlight, runs) {
      recordStepTimings(worker, inFlight === 1);
      const { elapsedMs, runIds } = await engineLoop(worker, client, {
        graph: MODEL_GRAPH_NAME,
        input: {},
        inFlight,
        total: runs,
      });
      lastRunIds = runIds;
      return elapsedMs;
    },
    async bodies() {
      const timings = await stepTimingsOf(worker, lastRunIds);
      return timings.flat().map((timing) => timing.endedAt - timing.startedAt);
    },
    r100: [],
    r1: [],
  };
}

async function chainSide(redisUrl: string, modelUrl: string): Promise<Side> {
  const prefix = `mchain${randomBytes(3).toString('hex')}`;
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_QUEUE_PREFIX: prefix,
    AGENTQ_WORKER_CONCURRENCY: String(IN_FLIGHT),
    OPENAI_BASE_URL: modelUrl,
  };
  const worker = await forkWorker(
    'bench/workers/bullmq-model-chain-worker.ts',
    { ...env, ...profileEnv() },
    { execArgv: profileExecArgv() },
  );
  const queue = new Queue('bench-model-chain', { connection: { url: redisUrl }, prefix });
  return {
    name: 'bullmq_chain',
    worker,
    loop: (inFlight, runs) => chainLoop(worker, queue, { inFlight, total: runs, length: MODEL_GRAPH_NODES }),
    async bodies() {
      return (await worker.request<{ bodies: number[] }>({ type: 'bodies' }, 'bodies')).bodies;
    },
    r100: [],
    r1: [],
  };
}

async function measureR100(side: Side, redis: Redis, breakdown: boolean, profile: boolean): Promise<void> {
  const meter = () => side.worker.request<MeterReading & { type: string }>({ type: 'meter' }, 'meter');
  const steps = r100Runs * MODEL_GRAPH_NODES;
  if (profile) side.worker.child.kill('SIGUSR2');
  const [workerBefore, redisBefore, statsBefore] = [await meter(), await redisCpuUs(redis), await commandStats(redis)];
  const elapsedMs = await side.loop(IN_FLIGHT, r100Runs);
  const [workerAfter, redisAfter, statsAfter] = [await meter(), await redisCpuUs(redis), await commandStats(redis)];
  if (profile) side.worker.child.kill('SIGUSR2');
  if (profile && allocDir) {
    const { allocatedBytes, gcUs } = await allocationsOf(side.worker.child.pid!);
    const gcTotal = Object.values(gcUs).reduce((sum, us) => sum + us, 0);
    side.allocated = { bytesPerStep: allocatedBytes / steps, gcUsPerStep: gcTotal / steps };
  }
  const perCommand = perCommandDelta(statsBefore, statsAfter).filter(([name]) => name !== 'info');
  if (breakdown)
    log(
      `  ${side.name} Redis calls per step (µs of Redis's own time): ${perCommand.map(([name, { calls, usec }]) => `${name} ${(calls / steps).toFixed(2)} (${(usec / steps).toFixed(1)} µs)`).join(', ')}`,
    );
  side.r100.push({
    stepsPerS: steps / (elapsedMs / 1000),
    workerCpuUs: (workerAfter.cpuUs - workerBefore.cpuUs) / steps,
    redisCpuUs: (redisAfter - redisBefore) / steps,
    // The two meter requests' INFO calls are the bench's, not the worker's.
    workerCommands: (workerAfter.commands - workerBefore.commands) / steps,
    redisCalls: perCommand.reduce((sum, [, { calls }]) => sum + calls, 0) / steps,
  });
}

/** What alloc-on-signal.mjs counted in worker `pid`'s first profiled round (it writes the file on the signal). */
async function allocationsOf(pid: number): Promise<{ allocatedBytes: number; gcUs: Record<string, number> }> {
  const file = join(resolve(allocDir!), `${pid}-0.alloc.json`);
  for (let tries = 0; ; tries += 1) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as { allocatedBytes: number; gcUs: Record<string, number> };
    } catch (error) {
      if (tries >= 50) throw error;
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}

async function measureR1(side: Side): Promise<void> {
  await side.bodies(); // drops the r100 round's
  const elapsedMs = await side.loop(1, r1Runs);
  side.r1.push({
    wallMsPerStep: elapsedMs / (r1Runs * MODEL_GRAPH_NODES),
    bodyP50: percentile(await side.bodies(), 50),
  });
}

const median = (list: number[]) => percentile(list, 50);

function figuresOf(side: Side): Record<string, number> {
  const of = (pick: (measure: Measure) => number) => median(side.r100.map(pick));
  return {
    steps_per_s_r100: of((m) => m.stepsPerS),
    cpu_us_per_step: of((m) => m.workerCpuUs + m.redisCpuUs),
    cpu_us_per_step_worker: of((m) => m.workerCpuUs),
    cpu_us_per_step_redis: of((m) => m.redisCpuUs),
    worker_cmds_per_step: of((m) => m.workerCommands),
    redis_calls_per_step: of((m) => m.redisCalls),
    r1_ms_per_step: median(side.r1.map((r) => r.wallMsPerStep)),
    r1_body_p50_ms: median(side.r1.map((r) => r.bodyP50)),
    ...(side.allocated
      ? { kb_allocated_per_step: side.allocated.bytesPerStep / 1024, gc_us_per_step: side.allocated.gcUsPerStep }
      : {}),
  };
}

async function main(): Promise<void> {
  for (const dir of [profileDir, allocDir]) if (dir) mkdirSync(resolve(dir), { recursive: true });
  const bench = await openBenchRedis();
  const redis = new Redis(bench.url);
  const model = await startBenchModel();
  const sides: Side[] = [];
  try {
    for (const [index, root] of roots.entries()) sides.push(await agentqSide(root, index, bench.url, model.server.url));
    const chain = await chainSide(bench.url, model.server.url);
    sides.push(chain);
    log(`model steps on ${bench.description}: ${sides.map((side) => side.name).join(', ')}; ${rounds} rounds`);
    for (const side of sides) await side.loop(IN_FLIGHT, r100Runs / 2); // warm-up: connections, JIT
    for (let turn = 0; turn < rounds; turn += 1) {
      // Rotated, not reversed: with three sides a reversal leaves the middle one always second, right after
      // another side's round (whose expiring keys and AOF writes Redis is still busy with).
      const shift = turn % sides.length;
      const order = [...sides.slice(shift), ...sides.slice(0, shift)];
      for (const side of order) {
        await measureR100(side, redis, turn === 0 && args.includes('--commands'), turn === 0 && profiling);
        model.setLatency(0); // drops the model server's request log
        await measureR1(side);
        model.setLatency(0);
      }
      log(
        `  round ${turn + 1}: ${sides.map((side) => `${side.name} ${side.r100[turn]!.stepsPerS.toFixed(0)} steps/s, ${(side.r100[turn]!.workerCpuUs + side.r100[turn]!.redisCpuUs).toFixed(0)} µs/step`).join('; ')}`,
      );
    }
    const chainFigures = figuresOf(chain);
    for (const [name, value] of Object.entries(chainFigures))
      process.stdout.write(`bullmq_chain_${name}=${round(value)}\n`);
    for (const [index, side] of sides.slice(0, -1).entries()) {
      const figures = figuresOf(side);
      const line = (name: string, value: number) => process.stdout.write(`agentq${index}_${name}=${round(value)}\n`);
      process.stdout.write(`agentq${index}_root=${roots[index]}\n`);
      for (const [name, value] of Object.entries(figures)) line(name, value);
      line('cpu_vs_chain', figures.cpu_us_per_step! / chainFigures.cpu_us_per_step!);
      line('steps_per_s_r100_vs_chain', figures.steps_per_s_r100! / chainFigures.steps_per_s_r100!);
      line('r1_ms_per_step_vs_chain', figures.r1_ms_per_step! / chainFigures.r1_ms_per_step!);
      line('r1_body_p50_vs_chain', figures.r1_body_p50_ms! / chainFigures.r1_body_p50_ms!);
    }
  } finally {
    await Promise.all(sides.map((side) => side.worker.stop()));
    redis.disconnect();
    await model.server.close();
    await bench.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`bench:model-step failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
