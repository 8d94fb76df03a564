import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchFigures, BenchSection } from '../lib/bench-section.js';
import { percentile, round } from '../lib/stats.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'dist/bin/agentq.js');

function timeOnce(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    // `status` of a missing run exits 1 by design; anything else non-zero is a broken measurement.
    child.on('close', (code) => (code === 0 || (code === 1 && args[0] === 'status') ? resolve(performance.now() - started) : reject(new Error(`agentq ${args.join(' ')} exited ${code}: ${stderr.trim().slice(0, 300)}`))));
  });
}

/**
 * `cli_cold_start_ms_<command>`: wall time of one `agentq` process, from spawn to exit, median of N, for
 * `--help` (loading only), `search` (the embedded store, one query) and `status` (one Redis read). The
 * built CLI (`dist/`, `npm run build`) as users run it, not tsx. Goal ≤ 300 ms on a quiet machine.
 */
export const cliColdStartSection: BenchSection = {
  name: 'cli',
  async run({ redisUrl, quick, log }): Promise<BenchFigures> {
    if (!existsSync(cli)) throw new Error(`BENCH_SETUP: ${cli} is missing; run \`npm run build\` first`);
    const dataDir = mkdtempSync(join(tmpdir(), 'agentq-bench-cli-'));
    const env = { ...process.env, REDIS_URL: redisUrl, AGENTQ_DATA_DIR: dataDir, AGENTQ_LOG_LEVEL: 'silent' };
    const repeats = quick ? 3 : 11;
    const figures: BenchFigures = {};
    try {
      for (const [name, args] of [
        ['help', ['--help']],
        ['search', ['search', 'vacation days', '--json']],
        ['status', ['status', 'run_bench_cli_missing', '--json']],
      ] as const) {
        await timeOnce([...args], env); // warm the file cache: a cold disk is not the CLI's cost
        const samples: number[] = [];
        for (let index = 0; index < repeats; index += 1) samples.push(await timeOnce([...args], env));
        figures[`cli_cold_start_ms_${name}`] = round(percentile(samples, 50), 0);
        log(`agentq ${args.join(' ')}: median ${figures[`cli_cold_start_ms_${name}`]} ms of ${repeats}`);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    return figures;
  },
};
