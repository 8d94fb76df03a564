/**
 * The five systems of the peers bench, each behind one interface: start a worker process, measure a
 * closed loop of runs, start runs durably without waiting (the crash workload), and hand a killed
 * worker's unfinished runs to a new one where the system does not do it itself. The servers (Redis,
 * PostgreSQL, restate-server) are shared and outlive the workers; their pids count in the CPU.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Agentq from '../../index.js';
import { freePort } from '../../shared/redis/private-redis-server.js';
import { benchEnv, enqueueAll } from '../lib/bench-runs.js';
import { engineLoop, stepTimingsOf } from '../lib/engine-loop.js';
import { forkWorker, type ForkedWorker } from '../lib/forked-worker.js';
import type { StepTiming } from '../lib/step-timings.js';
import { PEER_GRAPH_NAME } from './agentq-peer-graph.js';
import type { PeerWorkerScript } from './compile-workers.js';
import { PEER_MODEL, type StepKind } from './peer-steps.js';
import type { PrivatePostgres } from './postgres.js';
import type { PrivateRestate } from './restate-server.js';

export const SYSTEMS = ['agentq', 'restate', 'dbos', 'langgraph', 'chain'] as const;
export type SystemName = (typeof SYSTEMS)[number];

/** This checkout: its dist/ is the agentq the ratios to the peers are computed for. */
export const THIS_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The servers the systems share, started once by the bench, and the compiled worker scripts. */
export interface Servers {
  workers: Record<PeerWorkerScript, string>;
  redisUrl: string;
  redisPid: number;
  modelUrl: string;
  postgres?: PrivatePostgres;
  restate?: PrivateRestate;
}

export interface Measured {
  elapsedMs: number;
  timings: StepTiming[][];
}

/** One system with its worker process. */
export interface SystemUnderTest {
  readonly worker: ForkedWorker;
  /** The processes whose CPU is the system's: the worker and the servers it needs. */
  pids(): number[];
  measure(kind: StepKind, inFlight: number, runs: number): Promise<Measured>;
  /** Starts `count` runs durably; → their run ids (the ids the model prompts name). */
  submit(kind: StepKind, count: number): Promise<string[]>;
  /** A new worker process in place of the (killed) current one, same queues and stores. */
  restart(): Promise<ForkedWorker>;
  /** Hands unfinished runs to the current worker (only LangGraph needs it). */
  resume(kind: StepKind, runIds: string[]): Promise<void>;
  stop(): Promise<void>;
}

async function checked<T extends { error?: string }>(reply: Promise<T>, what: string): Promise<T> {
  const result = await reply;
  if (result.error) throw new Error(`BENCH_PEER_${what}: ${result.error}`);
  return result;
}

/** A system whose runs are driven inside its worker process (bench/peers/workers/serve-peer.ts). */
async function servedPeer(
  path: string,
  env: Record<string, string>,
  serverPids: number[],
  afterStart: () => Promise<void> = async () => undefined,
): Promise<SystemUnderTest> {
  let worker = await forkWorker(path, env, { tsx: false });
  await afterStart();
  let batch = 0;
  const tag = randomBytes(3).toString('hex');
  return {
    get worker() {
      return worker;
    },
    pids: () => [worker.child.pid!, ...serverPids],
    async measure(kind, inFlight, runs) {
      batch += 1;
      const message = { type: 'measure', kind, inFlight, runs, tag: `${tag}m${batch}` };
      return checked(worker.request<Measured & { error?: string }>(message, 'measured'), 'MEASURE');
    },
    async submit(kind, count) {
      batch += 1;
      const runIds = Array.from({ length: count }, (_, index) => `${tag}c${batch}-${index}`);
      await checked(worker.request<{ error?: string }>({ type: 'submit', kind, runIds }, 'submitted'), 'SUBMIT');
      return runIds;
    },
    async restart() {
      worker = await forkWorker(path, env, { tsx: false });
      return worker;
    },
    async resume(kind, runIds) {
      await checked(worker.request<{ error?: string }>({ type: 'resume', kind, runIds }, 'resumed'), 'RESUME');
    },
    stop: () => worker.stop(),
  };
}

/**
 * agentq built in `root` (this checkout or another one, `--agentq-root`): its worker is this checkout's
 * compiled agentq-worker on that root's dist/, its runs enqueued by that root's own client.
 */
async function agentq(servers: Servers, root: string, restartArgv: string[]): Promise<SystemUnderTest> {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'index.js'))) throw new Error(`no build in ${root}: run npm run build there first`);
  const env = benchEnv(servers.redisUrl, {
    AGENTQ_WORKER_CONCURRENCY: '100',
    AGENTQ_RETENTION_SECONDS: '600',
    OPENAI_BASE_URL: servers.modelUrl,
    OPENAI_API_KEY: 'bench',
    LLM_MODEL: PEER_MODEL,
    BENCH_AGENTQ_ROOT: root,
  });
  const { AgentClient, loadConfig } = (await import(pathToFileURL(join(dist, 'index.js')).href)) as typeof Agentq;
  const client = new AgentClient({ config: loadConfig(env) });
  const script = servers.workers['agentq-worker'];
  let worker = await forkWorker(script, env, { tsx: false });
  return {
    get worker() {
      return worker;
    },
    pids: () => [worker.child.pid!, servers.redisPid],
    async measure(kind, inFlight, total) {
      const { elapsedMs, runIds } = await engineLoop(worker, client, {
        graph: PEER_GRAPH_NAME,
        input: { kind },
        inFlight,
        total,
      });
      return { elapsedMs, timings: await stepTimingsOf(worker, runIds) };
    },
    submit: (kind, count) => enqueueAll(client, count, () => ({ graph: PEER_GRAPH_NAME, input: { kind } })),
    async restart() {
      worker = await forkWorker(script, env, { tsx: false, execArgv: restartArgv });
      return worker;
    },
    resume: async () => undefined,
    async stop() {
      await worker.stop();
      await client.close();
    },
  };
}

/**
 * Starts `name`'s worker on the shared servers (agentq: the build in `agentqRoot`, by default this
 * checkout's, its worker started in place of a killed one with the Node options `restartArgv`); throws
 * (with the reason) when the system cannot run here.
 */
export async function startSystem(
  name: SystemName,
  servers: Servers,
  { agentqRoot = THIS_ROOT, restartArgv = [] }: { agentqRoot?: string; restartArgv?: string[] } = {},
): Promise<SystemUnderTest> {
  const model = { OPENAI_BASE_URL: servers.modelUrl };
  switch (name) {
    case 'agentq':
      return agentq(servers, agentqRoot, restartArgv);
    case 'restate': {
      const restate = servers.restate;
      if (!restate) throw new Error('restate-server did not start');
      const port = await freePort();
      return servedPeer(
        servers.workers['restate-worker'],
        { ...model, BENCH_PEER_PORT: String(port), RESTATE_INGRESS_URL: restate.ingressUrl },
        [restate.pid],
        () => restate.register(`http://127.0.0.1:${port}`),
      );
    }
    case 'dbos':
      if (!servers.postgres) throw new Error('PostgreSQL did not start');
      return servedPeer(
        servers.workers['dbos-worker'],
        { ...model, DBOS_SYSTEM_DATABASE_URL: servers.postgres.url('dbos_bench') },
        [servers.postgres.pid],
      );
    case 'langgraph':
      if (!servers.postgres) throw new Error('PostgreSQL did not start');
      return servedPeer(
        servers.workers['langgraph-worker'],
        { ...model, BENCH_POSTGRES_URL: servers.postgres.url('langgraph_bench') },
        [servers.postgres.pid],
      );
    case 'chain':
      return servedPeer(
        servers.workers['chain-worker'],
        { ...model, REDIS_URL: servers.redisUrl, BENCH_CHAIN_PREFIX: `benchpc${randomBytes(3).toString('hex')}` },
        [servers.redisPid],
      );
  }
}
