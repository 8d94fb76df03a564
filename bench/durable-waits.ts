/**
 * `npm run bench:waits`: durable waits with many runs parked at once. N runs (1,000; `-- --quick` 200)
 * sleep until one instant, and N more wait for one event sent to their correlation key; one in-process
 * worker (AGENTQ_WORKER_CONCURRENCY 16) serves them. Reports the wake-up delay after the sleep's time and
 * after the event's send (p50/p95, ms, as each woken node measures it), the Redis bytes a parked run adds
 * for its wait (MEMORY USAGE of its waits hash, plus its share of the key's index) and the worker slots
 * the parked runs hold (active step jobs while all are parked). Uses REDIS_URL, or a private redis-server.
 * Writes bench/results/durable-waits-latest.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { AgentClient } from '../producer/client/agent-client.js';
import { channel } from '../shared/graph/channels.js';
import { defineGraph } from '../shared/graph/define-graph.js';
import { END, START } from '../shared/graph/graph.js';
import { StepQueues } from '../shared/store/step-queues.js';
import { startWorker } from '../worker/start-worker.js';
import { benchConfig } from './lib/bench-config.js';
import { openBenchRedis } from './lib/bench-redis.js';
import { percentile, round } from './lib/stats.js';

const RUNS = process.argv.includes('--quick') ? 200 : 1000;

const sleeper = defineGraph({
  name: 'bench-sleeper',
  input: undefined,
  state: { until: channel.replace(0), lateMs: channel.replace(0) },
  initialState: (input: unknown) => ({ until: (input as { until: number }).until }),
  output: (state) => state.lateMs,
})
  .node('nap', async (state, context) => {
    await context.sleep({ until: new Date(state.until) });
    return { lateMs: Date.now() - state.until };
  })
  .edge(START, 'nap')
  .edge('nap', END)
  .build();

const waiter = defineGraph({
  name: 'bench-waiter',
  input: undefined,
  state: { key: channel.replace(''), lateMs: channel.replace(0) },
  initialState: (input: unknown) => ({ key: (input as { key: string }).key }),
  output: (state) => state.lateMs,
})
  .node('wait', async (state, context) => {
    const outcome = await context.waitFor('go', { key: state.key });
    return { lateMs: 'event' in outcome ? Date.now() - Date.parse(outcome.event.sentAt) : -1 };
  })
  .edge(START, 'wait')
  .edge('wait', END)
  .build();

const redis = await openBenchRedis();
const config = benchConfig(redis.url, 'bw', { AGENTQ_WORKER_CONCURRENCY: '16', AGENTQ_TENANT_MAX_INFLIGHT: '0' });
const worker = await startWorker({ config, graphs: [sleeper, waiter] });
const client = new AgentClient({ config });
const keys = client.store.keys;
const store = client.store;

async function allParked(runIds: readonly string[]): Promise<void> {
  const pending = new Set(runIds);
  while (pending.size > 0) {
    for (const runId of [...pending])
      if ((await store.eventLog.events(runId)).some((event) => event.type === 'step-parked')) pending.delete(runId);
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The runs' records once all are finished (read every 100 ms, one runner for all: no blocking reader per run). */
async function allDone(runIds: readonly string[]) {
  for (;;) {
    const records = await Promise.all(runIds.map((runId) => store.reads.get(runId)));
    if (records.every((meta) => meta && ['completed', 'failed', 'cancelled'].includes(meta.status)))
      return records.map((meta) => ({ status: meta!.status, output: meta!.output }));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function enqueueAll(graph: string, input: (i: number) => unknown): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < RUNS; i += 50)
    ids.push(
      ...(
        await Promise.all(
          Array.from({ length: Math.min(50, RUNS - i) }, (_, j) => client.enqueue({ graph, input: input(i + j) })),
        )
      ).map((run) => run.id),
    );
  return ids;
}

const summary = (values: number[]) => ({
  p50: round(percentile(values, 50), 1),
  p95: round(percentile(values, 95), 1),
});

// Sleeps: every run sleeps until one instant far enough ahead for all of them to park first.
const started = Date.now();
const until = started + 20_000 + RUNS * 15;
const sleepers = await enqueueAll('bench-sleeper', () => ({ until }));
await allParked(sleepers);
const queues = new StepQueues(config.shards, config.queuePrefix, { connection: store.redis });
const activeSleeping = (await Promise.all(queues.all().map((queue) => queue.getActiveCount()))).reduce((a, b) => a + b);
let waitsBytes = 0;
for (const runId of sleepers) waitsBytes += Number(await store.redis.memory('USAGE', keys.runWaits(runId).waits)) || 0;
const sleepDone = await allDone(sleepers);
const sleepLate = sleepDone.map((run) => run.output as number);

// Events: every run waits on one key; one event wakes them all.
const key = `bench-${started}`;
const waiters = await enqueueAll('bench-waiter', () => ({ key }));
await allParked(waiters);
const activeWaiting = (await Promise.all(queues.all().map((queue) => queue.getActiveCount()))).reduce((a, b) => a + b);
let eventBytes = Number(await store.redis.memory('USAGE', keys.eventKey(config.tenant, key).waiters)) || 0;
for (const runId of waiters) eventBytes += Number(await store.redis.memory('USAGE', keys.runWaits(runId).waits)) || 0;
const sent = await client.sendEvent({ key, name: 'go', data: null });
const eventDone = await allDone(waiters);
const eventLate = eventDone.map((run) => run.output as number);

const result = {
  runs: RUNS,
  redis: redis.description,
  workerConcurrency: config.concurrency,
  sleepWakeDelayMs: summary(sleepLate),
  eventWakeDelayMs: summary(eventLate),
  eventReached: sent.reached,
  redisBytesPerParkedRun: { sleep: Math.round(waitsBytes / RUNS), waitFor: Math.round(eventBytes / RUNS) },
  workerSlotsPerParkedRun: { sleep: activeSleeping / RUNS, waitFor: activeWaiting / RUNS },
  completed: [...sleepDone, ...eventDone].filter((run) => run.status === 'completed').length,
};
console.log(JSON.stringify(result, null, 2));
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/durable-waits-latest.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
await queues.close();
await client.close();
await worker.close();
await redis.close();
