/**
 * `npm run bench:batch-floor -- [--root <checkout>]... [--rounds N] [--quick] [--timeline] [--cpu-prof <dir>]`:
 * the batch-floor section (bench/sections/batch-floor.ts) of each checkout given,
 * taking turns round by round, each on a private redis-server of its own — so this checkout and, say,
 * the session's start (`--root /work/base`) are measured in the same period of a busy machine. Besides
 * the section's own figures it prints, for the question phase only (the section's "N questions …" line to
 * its `batch_wall_s` line), what a question costs: CPU of the worker processes and of redis-server, the
 * Redis commands (per command with `--commands`) and the bytes to and from Redis.
 *  - `--timeline`: where a question's time went, from its run's events (p50/p90 ms of each segment:
 *    dispatch, the two model steps beyond the model's 200 ms, the search step).
 *  - `--cpu-prof <dir>`: a V8 CPU profile of each worker process over the question phase (their main
 *    threads), started and stopped with SIGUSR2 through a preloaded module (cpu-profile-on-signal.mjs).
 * Figures go to stdout as one line per checkout and round (`name=value`), progress to stderr.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../shared/redis/private-redis-server.js';
import type { BenchSection } from './lib/bench-section.js';
import { commandStats, perCommandDelta } from './lib/redis-commandstats.js';
import { redisCpuUs } from './lib/process-meter.js';
import { questionTimeline } from './lib/question-timeline.js';
import { argValues } from './lib/cli-args.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);
const args = process.argv.slice(2);
const values = (name: string) => argValues(name, args);
const roots = values('--root').map((root) => resolve(root));
const rounds = Number(values('--rounds')[0] ?? 1);
const quick = args.includes('--quick');
const profileDir = values('--cpu-prof')[0];

/** CPU seconds (user + system) of a process and its threads, from /proc; 0 once it is gone. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** This process's children (the section's worker processes) but `except` (redis-server). */
function childPids(except: number | undefined): number[] {
  const pids: number[] = [];
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    try {
      const text = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim();
      if (text) pids.push(...text.split(/\s+/).map(Number));
    } catch {
      // a thread that ended meanwhile
    }
  }
  return pids.filter((pid) => pid !== except);
}

interface Reading {
  workers: Map<number, number>;
  self: number;
  redisCpu: number;
  commands: Awaited<ReturnType<typeof commandStats>>;
  netIn: number;
  netOut: number;
}

async function read(redis: Redis, workers: number[]): Promise<Reading> {
  const usage = process.cpuUsage();
  const stats = await redis.info('stats');
  return {
    workers: new Map(workers.map((pid) => [pid, cpuOf(pid)])),
    self: (usage.user + usage.system) / 1e6,
    redisCpu: (await redisCpuUs(redis)) / 1e6,
    commands: await commandStats(redis),
    netIn: Number(/total_net_input_bytes:(\d+)/.exec(stats)?.[1] ?? 0),
    netOut: Number(/total_net_output_bytes:(\d+)/.exec(stats)?.[1] ?? 0),
  };
}

async function measure(root: string): Promise<Record<string, number>> {
  const { batchFloorSection } = (await import(pathToFileURL(join(root, 'bench/sections/batch-floor.ts')).href)) as {
    batchFloorSection: BenchSection;
  };
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-floor-'));
  const server = await startPrivateRedis({ appendonly: true, dir });
  const redis = new Redis(server.url);
  let questions = 0;
  let start: Promise<Reading> | undefined;
  let end: Promise<Reading> | undefined;
  const signalWorkers = () => {
    if (profileDir) for (const pid of childPids(server.process.pid)) process.kill(pid, 'SIGUSR2');
  };
  try {
    const figures = await batchFloorSection.run({
      redisUrl: server.url,
      quick,
      log(line) {
        const match = /^(\d+) questions of .*batch concurrency/.exec(line);
        if (match) {
          questions = Number(match[1]);
          signalWorkers();
          start = read(redis, childPids(server.process.pid));
        }
        if (line.includes('batch_wall_s=') && start) {
          signalWorkers();
          end = start.then((first) => read(redis, [...first.workers.keys()]));
        }
        log(`  ${line}`);
      },
    });
    const [first, last] = await Promise.all([start!, end!]);
    let workers = 0;
    const perWorker: number[] = [];
    for (const [pid, cpu] of last.workers) perWorker.push(cpu - (first.workers.get(pid) ?? 0));
    for (const cpu of perWorker) workers += cpu;
    // How evenly the question phase's work fell on the workers: eager starts keep a slot on its worker.
    log(`  worker CPU s over the questions: ${perWorker.map((cpu) => cpu.toFixed(2)).join(', ')}`);
    const perCommand = perCommandDelta(first.commands, last.commands).filter(([name]) => name !== 'info');
    if (args.includes('--commands'))
      log(
        `  Redis commands per question: ${perCommand.map(([name, { calls }]) => `${name} ${(calls / questions).toFixed(1)}`).join(', ')}`,
      );
    const timeline = args.includes('--timeline') ? await questionTimeline(redis) : {};
    return {
      ...figures,
      worker_cpu_ms_per_question: (workers * 1000) / questions,
      redis_cpu_ms_per_question: ((last.redisCpu - first.redisCpu) * 1000) / questions,
      driver_cpu_ms_per_question: ((last.self - first.self) * 1000) / questions,
      redis_cmds_per_question: perCommand.reduce((sum, [, { calls }]) => sum + calls, 0) / questions,
      redis_in_kb_per_question: (last.netIn - first.netIn) / 1024 / questions,
      redis_out_kb_per_question: (last.netOut - first.netOut) / 1024 / questions,
      ...timeline,
    };
  } finally {
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (roots.length === 0) roots.push(here);
  if (profileDir) {
    mkdirSync(profileDir, { recursive: true });
    // Only the workers (spawned after this) get the preload: this process's own NODE_OPTIONS are read already.
    process.env.AGENTQ_CPU_PROFILE_DIR = resolve(profileDir);
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${pathToFileURL(join(here, 'bench/lib/cpu-profile-on-signal.mjs')).href}`;
  }
  for (let round = 1; round <= rounds; round += 1) {
    for (const root of roots) {
      const load = loadavg()[0]!.toFixed(2);
      log(`round ${round}: ${root} (load average ${load})`);
      const figures = await measure(root);
      const line = Object.entries(figures)
        .map(([name, value]) => `${name}=${Math.round(value * 1000) / 1000}`)
        .join(' ');
      process.stdout.write(`round=${round} root=${root} load=${load} ${line}\n`);
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`bench:batch-floor failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
