import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { createVectorStore } from '../../shared/adapters/create-vector-store.js';
import type { BenchFigures, BenchSection } from '../lib/bench-section.js';
import { percentile, round } from '../lib/stats.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'dist/bin/agentq.js');

/**
 * Preloaded into the timed process: at exit it writes the process's CPU time (user + system, all its
 * threads, in µs) to fd 3. Wall time on a busy machine is mostly waiting for a core; CPU time is what
 * the CLI itself costs, and moves much less with the load.
 */
const REPORT_CPU = `data:text/javascript,${encodeURIComponent("import { writeSync } from 'node:fs'; process.on('exit', () => { const { user, system } = process.cpuUsage(); writeSync(3, String(user + system)); });")}`;

function timeOnce(args: string[], env: NodeJS.ProcessEnv): Promise<{ wallMs: number; cpuMs: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REPORT_CPU, cli, ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let cpu = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdio[3]!.on('data', (chunk: Buffer) => (cpu += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ wallMs: performance.now() - started, cpuMs: Number(cpu) / 1000 })
        : reject(new Error(`agentq ${args.join(' ')} exited ${code}: ${stderr.trim().slice(0, 300)}`)),
    );
  });
}

/** What the timed commands find: one queued run (status reads a real record) and a small collection (search has hits). */
async function seed(env: NodeJS.ProcessEnv, runId: string): Promise<void> {
  const config = loadConfig(env);
  const client = new AgentClient({ config });
  try {
    // No worker serves `chain` here: the run stays queued, which is all `status` needs.
    await client.enqueue({ graph: 'chain', input: { steps: 1 }, runId }, { queueUnserved: true });
  } finally {
    await client.close();
  }
  const store = createVectorStore(config);
  try {
    await store.ensureCollection(config.tenant, 'handbook');
    await store.upsert(
      config.tenant,
      'handbook',
      Array.from({ length: 50 }, (_unused, index) => ({
        id: `handbook-${index}`,
        text: `Section ${index}: employees get ${20 + (index % 10)} vacation days a year; unused days carry over until March.`,
        context: 'Employee handbook',
        payload: {
          docId: 'doc_bench_handbook',
          title: 'Employee handbook',
          path: 'handbook.md',
          page: null,
          headingPath: [],
        },
      })),
    );
  } finally {
    await store.close();
  }
}

/**
 * `cli_cold_start_ms_<command>`: wall time of one `agentq` process, from spawn to exit, median of N, for
 * `--help` (loading only), `search` (one query of a 50-chunk collection in the embedded store),
 * `status` (one queued run's record from Redis, over the bare RESP connection) and `status_ioredis` (the
 * same read through ioredis, as a URL with options, `rediss://` or a Cluster takes it). The built CLI (`dist/`, `npm run build`) as users run
 * it, not tsx. Goal ≤ 300 ms on a quiet machine. `cli_cpu_ms_<command>`: the same processes' CPU time
 * (median), the figure to compare on a busy machine.
 */
export const cliColdStartSection: BenchSection = {
  name: 'cli',
  async run({ redisUrl, quick, log }): Promise<BenchFigures> {
    if (!existsSync(cli)) throw new Error(`BENCH_SETUP: ${cli} is missing; run \`npm run build\` first`);
    const dataDir = mkdtempSync(join(tmpdir(), 'agentq-bench-cli-'));
    const id = Date.now().toString(36);
    const env = {
      ...process.env,
      REDIS_URL: redisUrl,
      AGENTQ_DATA_DIR: dataDir,
      AGENTQ_LOG_LEVEL: 'silent',
      AGENTQ_KEY_PREFIX: `benchcli${id}`,
      AGENTQ_QUEUE_PREFIX: `benchcliq${id}`,
    };
    const runId = `bench_cli_${id}`;
    const repeats = quick ? 3 : 11;
    const figures: BenchFigures = {};
    try {
      await seed(env, runId);
      // The same `status` read through ioredis (RunReader), which a URL option routes it to, as it does
      // `rediss://` and a Cluster: the figure that keeps the bare RESP reader's worth measured.
      const ioredisUrl = new URL(redisUrl);
      ioredisUrl.searchParams.set('family', '4');
      for (const [name, args, commandEnv] of [
        ['help', ['--help'], env],
        ['search', ['search', 'vacation days', '--json'], env],
        ['status', ['status', runId, '--json'], env],
        ['status_ioredis', ['status', runId, '--json'], { ...env, REDIS_URL: ioredisUrl.href }],
      ] as const) {
        await timeOnce([...args], commandEnv); // warm the file cache: a cold disk is not the CLI's cost
        const samples: { wallMs: number; cpuMs: number }[] = [];
        for (let index = 0; index < repeats; index += 1) samples.push(await timeOnce([...args], commandEnv));
        figures[`cli_cold_start_ms_${name}`] = round(
          percentile(
            samples.map((sample) => sample.wallMs),
            50,
          ),
          0,
        );
        figures[`cli_cpu_ms_${name}`] = round(
          percentile(
            samples.map((sample) => sample.cpuMs),
            50,
          ),
          0,
        );
        log(
          `${name}, agentq ${args.join(' ')}: median ${figures[`cli_cold_start_ms_${name}`]} ms wall, ${figures[`cli_cpu_ms_${name}`]} ms CPU, of ${repeats}`,
        );
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    return figures;
  },
};
