/**
 * `npm run bench:steps`: what a step costs. Runs the `chain` graph (sleepMs 0) on one worker process
 * beside a plain BullMQ job chain and an in-process loop, on one Redis, and prints `name=value` lines.
 * Uses REDIS_URL, or starts a private redis-server (AOF on, everysec) when it is unset.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { AgentClient } from '../producer/agent-client.js';
import { loadConfig } from '../shared/config.js';
import { startPrivateRedis } from '../shared/redis/private-redis-server.js';
import { closedLoop } from './lib/closed-loop.js';
import { commandTotals } from './lib/redis-commandstats.js';
import { percentile, round } from './lib/stats.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const STEPS = 10;
const CONCURRENCY = 100;
const quick = process.argv.includes('--quick');
const totals = { r1: quick ? 10 : 40, r10: quick ? 40 : 200, r100: quick ? 200 : 1000 };
const figures: Record<string, number> = {};
const log = (line: string) => process.stderr.write(`${line}\n`);

function record(name: string, value: number): void {
  figures[name] = round(value);
  log(`  ${name}=${figures[name]}`);
}

interface WorkerProcess {
  child: ChildProcess;
  onFinished(listener: (runId: string) => void): void;
  request<T>(message: object, replyType: string): Promise<T>;
  stop(): Promise<void>;
}

async function forkWorker(script: string, env: Record<string, string>): Promise<WorkerProcess> {
  const child = fork(join(root, script), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let listener: (runId: string) => void = () => undefined;
  const replies = new Map<string, (value: unknown) => void>();
  child.on('message', (message: { type: string; runId?: string }) => {
    if (message.type === 'finished') listener(message.runId!);
    replies.get(message.type)?.(message);
  });
  await new Promise<void>((resolve, reject) => {
    replies.set('ready', () => resolve());
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
  return {
    child,
    onFinished: (next) => (listener = next),
    request<T>(message: object, replyType: string) {
      return new Promise<T>((resolve) => {
        replies.set(replyType, (value) => resolve(value as T));
        child.send(message);
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send({ type: 'stop' });
      }),
  };
}

/** Closed loop of chain runs through agentq; → elapsed ms and the run ids. */
async function engineLoop(worker: WorkerProcess, client: AgentClient, inFlight: number, total: number, input: object, maxSteps = 1000): Promise<{ elapsedMs: number; runIds: string[] }> {
  const runIds: string[] = [];
  const mine = new Set<string>();
  // A run may finish before its enqueue call returns here: remember finishes not yet claimed.
  const unclaimed = new Set<string>();
  const loop = closedLoop(inFlight, total, async () => {
    const run = await client.enqueue({ graph: 'chain', input, options: { maxSteps } });
    runIds.push(run.id);
    mine.add(run.id);
    if (unclaimed.delete(run.id)) loop.finished();
  });
  worker.onFinished((runId) => {
    if (mine.delete(runId)) loop.finished();
    else unclaimed.add(runId);
  });
  const elapsedMs = await loop.done;
  return { elapsedMs, runIds };
}

async function chainLoop(worker: WorkerProcess, queue: Queue, inFlight: number, total: number): Promise<number> {
  const tag = randomBytes(3).toString('hex');
  const loop = closedLoop(inFlight, total, async (index) => {
    await queue.add('link', { chain: `${tag}-${index}`, index: 0, length: STEPS }, { jobId: `${tag}-${index}.0`, removeOnComplete: { count: 1000 } });
  });
  worker.onFinished(() => loop.finished());
  return loop.done;
}

function transitions(observations: { superstep: number; startedAt: number; endedAt: number }[]): number[] {
  const ordered = [...observations].sort((a, b) => a.superstep - b.superstep);
  const result: number[] = [];
  for (let k = 0; k + 1 < ordered.length; k += 1) result[ordered[k]!.superstep] = ordered[k + 1]!.startedAt - ordered[k]!.endedAt;
  return result;
}

async function startTraceSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'agentq-bench-'));
  const privateRedis = process.env.REDIS_URL ? undefined : await startPrivateRedis({ appendonly: true, dir: dataDir });
  const redisUrl = process.env.REDIS_URL ?? privateRedis!.url;
  log(`bench:steps on ${redisUrl}${privateRedis ? ' (private redis-server, AOF everysec)' : ''}; ${STEPS}-step chains, worker concurrency ${CONCURRENCY}${quick ? ' (quick)' : ''}`);
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
  };
  const client = new AgentClient({ config: loadConfig({ ...baseEnv, REDIS_URL: redisUrl }) });
  const chainQueue = new Queue('bench-chain', { connection: { url: redisUrl }, prefix: baseEnv.AGENTQ_QUEUE_PREFIX });
  try {
    // --- agentq, telemetry off
    log('agentq engine (telemetry off)');
    const engine = await forkWorker('bench/workers/engine-worker.ts', { ...baseEnv, BENCH_RECORD_STEPS: 'true' });
    await engineLoop(engine, client, 10, 20, { steps: STEPS });
    const r1 = await engineLoop(engine, client, 1, totals.r1, { steps: STEPS });
    record('engine_steps_per_s_r1', (totals.r1 * STEPS) / (r1.elapsedMs / 1000));
    const r1Observations = await engine.request<{ observations: Record<string, { superstep: number; startedAt: number; endedAt: number }[]> }>({ type: 'observations', runIds: r1.runIds }, 'observations');
    const r1Transitions = Object.values(r1Observations.observations).flatMap((list) => transitions(list).filter((value) => value !== undefined));
    record('engine_transition_p50_ms_r1', percentile(r1Transitions, 50));
    record('engine_transition_p95_ms_r1', percentile(r1Transitions, 95));
    const r10 = await engineLoop(engine, client, 10, totals.r10, { steps: STEPS });
    record('engine_steps_per_s_r10', (totals.r10 * STEPS) / (r10.elapsedMs / 1000));
    const before = await commandTotals(redis);
    const r100 = await engineLoop(engine, client, 100, totals.r100, { steps: STEPS });
    const after = await commandTotals(redis);
    const r100Steps = totals.r100 * STEPS;
    record('engine_steps_per_s_r100', r100Steps / (r100.elapsedMs / 1000));
    record('redis_calls_per_step', (after.calls - before.calls) / r100Steps);
    record('redis_usec_per_step', (after.usec - before.usec) / r100Steps);
    // A 200-step run whose history grows by one message per step: does a step cost more late than early?
    const growthRuns = quick ? 1 : 3;
    const growth = await engineLoop(engine, client, 1, growthRuns, { steps: 200, appendMessages: true });
    const growthObservations = await engine.request<{ observations: Record<string, { superstep: number; startedAt: number; endedAt: number }[]> }>({ type: 'observations', runIds: growth.runIds }, 'observations');
    const early: number[] = [];
    const late: number[] = [];
    for (const list of Object.values(growthObservations.observations)) {
      const values = transitions(list);
      early.push(...values.slice(0, 10));
      late.push(...values.slice(189, 199));
    }
    record('transition_growth_200', percentile(late, 50) / percentile(early, 50));
    await engine.stop();

    // --- plain BullMQ chain, telemetry off
    log('plain BullMQ job chain (telemetry off)');
    const chain = await forkWorker('bench/workers/bullmq-chain-worker.ts', baseEnv);
    await chainLoop(chain, chainQueue, 10, 20);
    const chainMs = await chainLoop(chain, chainQueue, 100, totals.r100);
    record('bullmq_chain_steps_per_s_r100', (totals.r100 * STEPS) / (chainMs / 1000));
    await chain.stop();

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
    const otelEnv = { ...baseEnv, OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
    const engineOtel = await forkWorker('bench/workers/engine-worker.ts', otelEnv);
    await engineLoop(engineOtel, client, 10, 20, { steps: STEPS });
    const r100Otel = await engineLoop(engineOtel, client, 100, totals.r100, { steps: STEPS });
    record('engine_steps_per_s_r100_otel', (totals.r100 * STEPS) / (r100Otel.elapsedMs / 1000));
    await engineOtel.stop();
    const chainOtel = await forkWorker('bench/workers/bullmq-chain-worker.ts', otelEnv);
    await chainLoop(chainOtel, chainQueue, 10, 20);
    const chainOtelMs = await chainLoop(chainOtel, chainQueue, 100, totals.r100);
    record('bullmq_chain_steps_per_s_r100_otel', (totals.r100 * STEPS) / (chainOtelMs / 1000));
    await chainOtel.stop();
    await sink.close();
    record('engine_vs_bullmq_chain_r100_otel', figures.engine_steps_per_s_r100_otel! / figures.bullmq_chain_steps_per_s_r100_otel!);
    record('bench_wall_s', (Date.now() - started) / 1000);
  } finally {
    await client.close();
    await chainQueue.close();
    redis.disconnect();
    await privateRedis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name}=${value}\n`);
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/steps-latest.json'), `${JSON.stringify({ at: new Date().toISOString(), quick, figures }, null, 2)}\n`);
}

await main();
