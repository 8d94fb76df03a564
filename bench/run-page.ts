/**
 * `npx tsx bench/run-page.ts [--steps 20000]`: what a long run costs the API to show, on this machine.
 * One completed run of `--steps` one-task supersteps (each with one history message), committed
 * straight through the run store's scripts, and another like it of the same graph (the run page's
 * diagram reads recent runs of the graph too). Then, through the API in this process (app.inject):
 *  - the run page (`GET /runs/:id`): bytes, and ms per view (median of 5, after one warm-up);
 *  - three views at once: ms until all three are answered, and the process's RSS growth;
 *  - `GET /v1/runs/:id/steps` and `/messages` as a client calls them without parameters: bytes, ms.
 * Progress on stderr, `name=value` lines on stdout. Not a test: no figure here is asserted.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createApi } from '../producer/api/create-api.js';
import { RunReader } from '../producer/client/run-reader.js';
import { newRunId } from '../shared/contracts/ids.js';
import { loadConfig } from '../shared/config/config.js';
import { createLogger } from '../shared/telemetry/logger.js';
import { commitLongRun } from '../test/helpers/long-run.js';
import { openBenchRedis } from './lib/bench-redis.js';

const { values } = parseArgs({ options: { steps: { type: 'string', default: '20000' } } });
const STEPS = Number(values.steps);
const KEY = 'bench-page-key-0123456789abcdef';

const redis = await openBenchRedis();
const config = loadConfig({
  REDIS_URL: redis.url,
  AGENTQ_KEY_PREFIX: 'benchpage',
  AGENTQ_QUEUE_PREFIX: 'benchpageq',
  AGENTQ_LOG_LEVEL: 'silent',
  AGENTQ_API_KEYS: `${KEY}:acme:admin`,
  EMBED_PROVIDER: 'none',
  // Thousands of commits sent at once on a shared machine: the production fail-fast bound would cut them off.
  AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '20000',
});
const reader = new RunReader({ config });
const app = await createApi({ config, logger: createLogger('silent') });
const print = (name: string, value: number | string) => console.log(`${name}=${value}`);
const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;

try {
  process.stderr.write(`committing two runs of ${STEPS} steps on ${redis.description}\n`);
  const runId = newRunId();
  for (const id of [newRunId(), runId])
    await commitLongRun(reader.store, { runId: id, tenant: 'acme', steps: STEPS, message: 'a short answer' });
  const get = (url: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${KEY}` } });
  const timed = async (url: string) => {
    await get(url);
    const times: number[] = [];
    let bytes = 0;
    for (let round = 0; round < 5; round += 1) {
      const started = performance.now();
      const response = await get(url);
      times.push(performance.now() - started);
      if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
      bytes = response.rawPayload.length;
    }
    return { bytes, ms: median(times) };
  };
  const page = await timed(`/runs/${runId}`);
  print('run_page_bytes', page.bytes);
  print('run_page_ms', page.ms.toFixed(0));
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  await Promise.all([1, 2, 3].map(() => get(`/runs/${runId}`)));
  print('run_page_3_views_ms', (performance.now() - started).toFixed(0));
  print('run_page_3_views_rss_growth_mb', ((process.memoryUsage().rss - rssBefore) / 1e6).toFixed(0));
  for (const [name, url] of [
    ['steps_api', `/v1/runs/${runId}/steps`],
    ['messages_api', `/v1/runs/${runId}/messages`],
  ] as const) {
    const answer = await timed(url);
    print(`${name}_bytes`, answer.bytes);
    print(`${name}_ms`, answer.ms.toFixed(0));
  }
} finally {
  await app.close();
  await reader.close();
  await redis.close();
}
