/**
 * `npm run bench:child-runs`: child runs (context.runGraphs) at a fan-out of 1,000, on an in-process
 * worker (no model: the children double a number). Uses REDIS_URL, or a private redis-server when it is
 * unset; `-- --quick` fans out to 100. Writes bench/results/child-runs-latest.json.
 *
 * - `child_runs_fanout_wall_ms`: enqueue of the parent → parent completed, its step having started the
 *   children, parked, been woken once by the last child's end and summed their outputs (median of 3).
 * - `child_runs_parked_parent_bytes`: Redis bytes (MEMORY USAGE) the parked parent holds beyond a run
 *   that does not wait — its memo hash (the child links and the wait count) and its delayed step job —
 *   while its children wait for input; `…_per_child` the same divided by the fan-out.
 * - `child_runs_parked_parent_active_jobs`: step jobs active meanwhile (worker slots held): 0 expected.
 * - `child_runs_cancel_wall_ms`: cancelling that parked parent → every child cancelled.
 */
import { randomBytes } from 'node:crypto';
import { AgentClient } from '../producer/client/agent-client.js';
import { loadConfig } from '../shared/config/config.js';
import { stepJobId } from '../shared/contracts/job-schema.js';
import { ChildLinks } from '../shared/store/child-links.js';
import { StepQueues } from '../shared/store/step-queues.js';
import { createLogger } from '../shared/telemetry/logger.js';
import { startWorker } from '../worker/start-worker.js';
import { childDoubleGraph, parentSumGraph } from '../test/helpers/child-run-graphs.js';
import type { BenchContext, BenchFigures } from './lib/bench-section.js';
import { runStandalone } from './lib/run-standalone.js';
import { round } from './lib/stats.js';

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench child-runs: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function runChildRuns({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const fanOut = quick ? 100 : 1000;
  const id = randomBytes(3).toString('hex');
  const config = loadConfig({
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchc${id}`,
    AGENTQ_QUEUE_PREFIX: `benchcq${id}`,
    AGENTQ_LOG_LEVEL: 'warn',
    EMBED_PROVIDER: 'none',
    AGENTQ_CHILD_RUN_PARK_MS: '600000',
  });
  const worker = await startWorker({
    config,
    graphs: [childDoubleGraph(), parentSumGraph()],
    logger: createLogger(config.logLevel),
    reconciler: false,
  });
  const client = new AgentClient({ config });
  const links = new ChildLinks(client.store.redis, client.store.keys);
  const queues = new StepQueues(config.shards, config.queuePrefix, { connection: { url: redisUrl } });
  const figures: BenchFigures = { child_runs_fan_out: fanOut };
  try {
    const ns = Array.from({ length: fanOut }, (_, index) => index);
    const walls: number[] = [];
    for (let round_ = 0; round_ < (quick ? 1 : 3); round_ += 1) {
      const started = performance.now();
      const parent = await client.enqueue({ graph: 'parent-sum', input: { ns } });
      const done = await client.wait(parent.id, { timeoutMs: 600_000 });
      if (done.status !== 'completed') throw new Error(`bench child-runs: parent ${done.status}`);
      walls.push(performance.now() - started);
      log(`fan-out ${fanOut}: ${Math.round(walls.at(-1)!)} ms`);
    }
    figures.child_runs_fanout_wall_ms = round(walls.sort((a, b) => a - b)[Math.floor(walls.length / 2)]!);

    // Parked: the children wait for input, so the parent stays parked while it is measured.
    const parent = await client.enqueue({ graph: 'parent-sum', input: { ns, mode: 'ask' } });
    await until(async () => (await client.get(parent.id))?.status === 'running', 'the parent to run');
    const job = await queues.forRun(parent.id).getJob(stepJobId(parent.id, 0, 0));
    await until(async () => (await job?.getState()) === 'delayed', 'the parent to park');
    const asked: string[] = [];
    let cursor: string | null = '0';
    while (cursor !== null) {
      const page = await links.list(parent.id, { cursor, limit: 500 });
      asked.push(...page.children.map((child) => child.runId));
      cursor = page.nextCursor;
    }
    if (new Set(asked).size !== fanOut)
      throw new Error(`bench child-runs: ${asked.length} children listed of ${fanOut}`);
    await until(
      async () => (await links.states(asked)).every((state) => state?.status === 'waiting'),
      'every child to wait for input',
    );
    const memoBytes = Number(
      await client.store.redis.memory('USAGE', client.store.keys.run(parent.id).memo, 'SAMPLES', 0),
    );
    const jobKey = queues.forRun(parent.id).toKey(stepJobId(parent.id, 0, 0));
    const jobBytes = Number(await client.store.redis.memory('USAGE', jobKey, 'SAMPLES', 0));
    figures.child_runs_parked_parent_bytes = memoBytes + jobBytes;
    figures.child_runs_parked_parent_bytes_per_child = round((memoBytes + jobBytes) / fanOut);
    figures.child_runs_parked_parent_job_bytes = jobBytes;
    figures.child_runs_parked_parent_active_jobs = (
      await Promise.all(queues.all().map((queue) => queue.getActiveCount()))
    ).reduce((total, count) => total + count, 0);
    const cancelled = performance.now();
    await client.cancel(parent.id);
    const childIds = asked;
    await until(
      async () => (await links.states(childIds)).every((state) => state?.status === 'cancelled'),
      'the children to be cancelled',
    );
    figures.child_runs_cancel_wall_ms = round(performance.now() - cancelled);
  } finally {
    await queues.close();
    await client.close();
    await worker.close();
  }
  return figures;
}

await runStandalone({ name: 'child-runs', run: runChildRuns }, 'child-runs-latest.json');
