/**
 * `npm run bench:peers`: agentq beside durable-execution peers on the same workloads, in alternating
 * rounds (agentq, restate, dbos, langgraph, chain, agentq, …): Restate (its server from npm, the
 * TypeScript SDK), DBOS Transact and LangGraph.js with its Postgres checkpointer on a private
 * PostgreSQL (Debian's), and a plain BullMQ job chain. The peers are installed into bench/.peers/
 * (never into agentq's dependencies). Every model step of every system makes the same request through
 * agentq's openai-SDK adapter to one scripted model (its own process). See docs/benchmarks.md.
 *
 *   npm run bench:peers                       3 rounds
 *   npm run bench:peers -- --quick            1 short round, to check it works (not to quote)
 *   npm run bench:peers -- --rounds 5 --only agentq,restate
 *   npm run bench:peers -- --workloads crash --only agentq,restate   just the kill round (see workloads.ts)
 *   npm run bench:peers -- --workloads crash --only agentq --cpu-prof /tmp/prof
 *                                             a CPU profile of each agentq worker started after the kill
 *   npm run bench:peers -- --durability comparable   agentq's Redis with `appendfsync always`
 *   npm run bench:peers -- --agentq-root /work/before  that checkout's build too, as `agentq@<commit>`
 *
 * Every worker runs as plain Node from a script compiled ahead (peers/compile-workers.ts), none
 * under tsx. `--agentq-root <checkout>` (repeatable) runs the agentq worker of this checkout on that
 * checkout's dist/ (build it there first) in the same rounds: the tables then show this agentq ÷ that
 * build for every figure, and that build ÷ each peer.
 *
 * Prints the tables (Markdown) and writes bench/results/peers-latest.json (peers-comparable-latest.json
 * with comparable durability; `-crash` and the like before `-latest` with `--workloads`). A peer that cannot be
 * installed or started is reported as skipped, with the reason.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../shared/redis/private-redis-server.js';
import { argValues } from './lib/cli-args.js';
import { forkWorker } from './lib/forked-worker.js';
import { round } from './lib/stats.js';
import { compilePeerWorkers } from './peers/compile-workers.js';
import { agentqBuildName, roundOrder, type Entrant } from './peers/lineup.js';
import type { ModelCall } from './peers/model-calls.js';
import { peersFigures, peersTables } from './peers/peers-report.js';
import { postgresMissing, startPrivatePostgres, type PrivatePostgres } from './peers/postgres.js';
import { startPrivateRestate, type PrivateRestate } from './peers/restate-server.js';
import { installPeers, PEER_PACKAGES } from './peers/scratch.js';
import { startSystem, SYSTEMS, type Servers, type SystemName } from './peers/systems.js';
import {
  CRASH_MODEL_MS,
  CRASH_RUNS,
  measureRound,
  roundPartsOf,
  type ModelControl,
  type RoundFigures,
} from './peers/workloads.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const option = (name: string) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const quick = argv.includes('--quick');
const rounds = Number(option('--rounds') ?? (quick ? 1 : 3));
const comparable = option('--durability') === 'comparable';
const only = option('--only')?.split(',') ?? [...SYSTEMS];
const parts = roundPartsOf(option('--workloads'));
const cpuProfDir = option('--cpu-prof');
// Node writes the profile when the worker exits (the bench stops it after the round).
const restartArgv = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', resolve(cpuProfDir)] : [];
const agentqRoots = argValues('--agentq-root', argv).map((path) => resolve(path));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** What each system makes durable per step, and whether it waits for the disk (fsync) before going on. */
const FLUSHES: Record<SystemName, string> = {
  agentq: comparable
    ? 'Redis AOF with appendfsync always: every write is fsynced before Redis answers'
    : 'Redis AOF with appendfsync everysec (the default): written per step, fsynced once a second',
  restate:
    'restate-server 1.7.12 defaults: each journal entry appended to its log server (RocksDB WAL, fsync on) before the SDK goes on',
  dbos: 'PostgreSQL 15 defaults (fsync on, synchronous_commit on): each step checkpoint is a commit that waits for its WAL flush',
  langgraph:
    "PostgreSQL 15 defaults, durability 'sync': each step's checkpoint committed (WAL flushed) before the next step",
  chain: comparable
    ? 'Redis AOF with appendfsync always (the same Redis as agentq)'
    : 'Redis AOF with appendfsync everysec (the same Redis as agentq)',
};

const skipped: Record<string, string> = {};
const errors: string[] = [];
const perRound: Record<string, RoundFigures[]> = {};
const loads: number[] = [loadavg()[0]!];
const started = performance.now();

try {
  installPeers(log);
} catch (error) {
  for (const system of ['restate', 'dbos', 'langgraph'] as const)
    skipped[system] = `npm install of the peers failed: ${String(error)}`;
}

const workers = await compilePeerWorkers();
const modelWorker = await forkWorker(workers['model-server'], {}, { tsx: false });
const ask = <T>(message: object, reply: string) => modelWorker.request<T>(message, reply);
const model: ModelControl = {
  setLatency: (ms) => ask({ type: 'latency', ms }, 'latency').then(() => undefined),
  answered: () => ask<{ count: number }>({ type: 'answered' }, 'answered').then((reply) => reply.count),
  calls: () => ask<{ calls: ModelCall[] }>({ type: 'log' }, 'log').then((reply) => reply.calls),
};
const { url: modelUrl } = await ask<{ url: string }>({ type: 'url' }, 'url');

const redisDir = mkdtempSync(join(tmpdir(), 'agentq-bench-peers-redis-'));
const redis = await startPrivateRedis({ appendonly: true, dir: redisDir });
if (comparable) {
  const admin = new Redis(redis.url);
  await admin.config('SET', 'appendfsync', 'always');
  await admin.quit();
}
let postgres: PrivatePostgres | undefined;
let restate: PrivateRestate | undefined;
const wanted = (system: SystemName) => only.includes(system) && !skipped[system];
if (wanted('dbos') || wanted('langgraph')) {
  const missing = postgresMissing();
  try {
    if (missing) throw new Error(missing);
    postgres = await startPrivatePostgres();
  } catch (error) {
    skipped.dbos = skipped.langgraph = `PostgreSQL could not be started: ${String(error)}`;
  }
}
if (wanted('restate')) {
  try {
    restate = await startPrivateRestate();
  } catch (error) {
    skipped.restate = `restate-server could not be started: ${String(error)}`;
  }
}
const servers: Servers = { workers, redisUrl: redis.url, redisPid: redis.process.pid!, modelUrl, postgres, restate };
for (const [system, reason] of Object.entries(skipped)) log(`peers: ${system} skipped: ${reason}`);
const agentqs: Entrant[] = wanted('agentq') ? [{ name: 'agentq', system: 'agentq' }] : [];
for (const root of agentqRoots)
  agentqs.push({
    name: agentqBuildName(
      root,
      agentqs.map((entrant) => entrant.name),
    ),
    system: 'agentq',
    root,
  });
const peers: Entrant[] = SYSTEMS.filter((system) => system !== 'agentq').map((system) => ({ name: system, system }));
const entrants = [...agentqs, ...peers];

try {
  for (let index = 0; index < rounds; index += 1) {
    for (const { name, system, root: agentqRoot } of roundOrder(index, agentqs, peers)) {
      if (skipped[name] || (system !== 'agentq' && !wanted(system))) continue;
      log(`round ${index + 1}/${rounds}: ${name} (load ${loadavg()[0]!.toFixed(2)})`);
      loads.push(loadavg()[0]!);
      try {
        const running = await startSystem(system, servers, { agentqRoot, restartArgv });
        try {
          (perRound[name] ??= []).push(await measureRound(running, model, { quick, log, parts }));
        } finally {
          await running.stop().catch(() => undefined);
        }
      } catch (error) {
        const message = `round ${index + 1}, ${name}: ${error instanceof Error ? error.message : String(error)}`;
        log(`peers: ${message}`);
        errors.push(message);
        // A system that failed its first round cannot run here: skip it from then on.
        if (!perRound[name]) skipped[name] = message;
      }
    }
  }
} finally {
  await modelWorker.stop();
  await restate?.stop();
  await postgres?.stop();
  await redis.stop();
  rmSync(redisDir, { recursive: true, force: true });
}

const figures = peersFigures(perRound);
figures.bench_wall_s = round((performance.now() - started) / 1000);
const measured = entrants.map((entrant) => entrant.name).filter((name) => perRound[name]);
const load = { min: round(Math.min(...loads), 2), max: round(Math.max(...loads), 2), cores: availableParallelism() };
process.stdout.write(
  `${peersTables(figures, measured)}\nload average (1 min) ${load.min}–${load.max} on ${load.cores} cores; ` +
    `durability ${comparable ? 'comparable' : 'default'}; crash: ${CRASH_RUNS} runs, ${CRASH_MODEL_MS} ms model\n`,
);
for (const [system, reason] of Object.entries(skipped)) process.stdout.write(`skipped ${system}: ${reason}\n`);
mkdirSync(join(root, 'bench/results'), { recursive: true });
// A run of some workloads only (`--workloads`) leaves the full run's file alone.
const resultsFile = `peers${comparable ? '-comparable' : ''}${option('--workloads') ? `-${parts.join('-')}` : ''}-latest.json`;
writeFileSync(
  join(root, 'bench/results', resultsFile),
  `${JSON.stringify(
    {
      at: new Date().toISOString(),
      quick,
      rounds,
      workloads: parts,
      durability: comparable ? 'comparable' : 'default',
      load,
      versions: PEER_PACKAGES,
      flushes: FLUSHES,
      agentqRoots: Object.fromEntries(agentqs.map((entrant) => [entrant.name, entrant.root ?? 'this checkout'])),
      skipped,
      errors,
      perRound,
      figures,
    },
    null,
    2,
  )}\n`,
);
