/**
 * `npm run bench:concurrency-keys`: a burst of 10,000 runs (`-- --quick`: 1,000) over 100 concurrency keys
 * (limits 1 to 4, keys interleaved), all enqueued before they are counted, on one in-process worker with 400
 * step slots — more than any key's limit, so only the keys hold runs back. Each run is two steps with a
 * pause between; a run counts as in flight from its first step's start to its last step's end. Then the same
 * burst without keys, side by side. Uses REDIS_URL, or a private redis-server when it is unset. Writes
 * bench/results/concurrency-keys-latest.json.
 *
 * - `keys_over_limit`: keys whose most runs in flight at once exceeded their limit (0 expected);
 *   `keys_at_limit`: keys that reached it (the burst kept every key busy).
 * - `max_in_flight_over_limit`: the largest (most in flight − limit) over the keys (≤ 0 expected).
 * - `keyed_wall_ms`, `unkeyed_wall_ms`: the burst enqueued → all its runs finished; `unkeyed_max_in_flight_per_key`:
 *   what the keys would have let through without them.
 */
import { randomBytes } from 'node:crypto';
import { AgentClient } from '../producer/client/agent-client.js';
import { loadConfig } from '../shared/config/config.js';
import { channel } from '../shared/graph/channels.js';
import { defineGraph } from '../shared/graph/define-graph.js';
import { END, START } from '../shared/graph/graph.js';
import { createLogger } from '../shared/telemetry/logger.js';
import { startWorker } from '../worker/start-worker.js';
import type { BenchContext, BenchFigures } from './lib/bench-section.js';
import { runStandalone } from './lib/run-standalone.js';
import { round } from './lib/stats.js';

const KEYS = 100;
const limitOf = (key: number) => 1 + (key % 4);

/** Runs in flight per key now, and the most at once. */
const inFlight = new Map<string, number>();
const most = new Map<string, number>();

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

const keyedGraph = defineGraph({
  name: 'keyed',
  input: undefined,
  state: { key: channel.replace<string>('') },
  initialState: (input: unknown) => ({ key: String((input as { key: string }).key) }),
})
  .node('begin', async (state) => {
    const now = (inFlight.get(state.key) ?? 0) + 1;
    inFlight.set(state.key, now);
    most.set(state.key, Math.max(most.get(state.key) ?? 0, now));
    await pause();
    return {};
  })
  .node('end', async (state) => {
    await pause();
    inFlight.set(state.key, (inFlight.get(state.key) ?? 1) - 1);
    return {};
  })
  .edge(START, 'begin')
  .edge('begin', 'end')
  .edge('end', END)
  .build();

async function burst(client: AgentClient, count: number, keyed: boolean, prefix: string): Promise<number> {
  inFlight.clear();
  most.clear();
  const started = performance.now();
  const ids: string[] = [];
  for (let start = 0; start < count; start += 200) {
    const made = await Promise.all(
      Array.from({ length: Math.min(200, count - start) }, (_, offset) => {
        const index = (start + offset) % KEYS;
        const key = `${prefix}${index}`;
        return client.enqueue({
          graph: 'keyed',
          input: { key },
          ...(keyed ? { concurrency: { key, limit: limitOf(index) } } : {}),
        });
      }),
    );
    ids.push(...made.map((run) => run.id));
  }
  for (const id of ids) {
    const done = await client.wait(id, { timeoutMs: 900_000 });
    if (done.status !== 'completed') throw new Error(`bench concurrency-keys: run ${id} ${done.status}`);
  }
  return performance.now() - started;
}

async function runConcurrencyKeys({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const count = quick ? 1000 : 10_000;
  const id = randomBytes(3).toString('hex');
  const config = loadConfig({
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchk${id}`,
    AGENTQ_QUEUE_PREFIX: `benchkq${id}`,
    AGENTQ_LOG_LEVEL: 'warn',
    EMBED_PROVIDER: 'none',
    AGENTQ_WORKER_CONCURRENCY: '400',
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '30000',
    // The whole burst is accepted at once: above the default in-flight cap of a tenant.
    AGENTQ_TENANT_MAX_INFLIGHT: String(count * 2),
  });
  const worker = await startWorker({
    config,
    graphs: [keyedGraph],
    logger: createLogger(config.logLevel),
    reconciler: false,
  });
  const client = new AgentClient({ config });
  const figures: BenchFigures = { concurrency_keys_runs: count, concurrency_keys_keys: KEYS };
  try {
    const keyedMs = await burst(client, count, true, 'k');
    const excess = [...Array(KEYS).keys()].map((index) => (most.get(`k${index}`) ?? 0) - limitOf(index));
    figures.keys_over_limit = excess.filter((over) => over > 0).length;
    figures.keys_at_limit = excess.filter((over) => over === 0).length;
    figures.max_in_flight_over_limit = Math.max(...excess);
    figures.keyed_wall_ms = round(keyedMs);
    log(`keyed: ${Math.round(keyedMs)} ms, ${figures.keys_over_limit} keys over their limit`);
    const unkeyedMs = await burst(client, count, false, 'u');
    figures.unkeyed_wall_ms = round(unkeyedMs);
    figures.unkeyed_max_in_flight_per_key = Math.max(...most.values());
    figures.keyed_vs_unkeyed_wall = round(keyedMs / unkeyedMs);
    log(`unkeyed: ${Math.round(unkeyedMs)} ms, up to ${figures.unkeyed_max_in_flight_per_key} runs of a key at once`);
  } finally {
    await client.close();
    await worker.close();
  }
  return figures;
}

await runStandalone({ name: 'concurrency-keys', run: runConcurrencyKeys }, 'concurrency-keys-latest.json');
