/**
 * The `priority` section: what a big batch does to an interactive run's wall time. Two
 * `agentq worker` processes run `rag-agent` in model mode against the scripted OpenAI-compatible server
 * (every chat request answered after 200 ms; search once, then answer), on one small ingested document.
 *
 * First, on the idle system, 10 interactive runs at once (`client.enqueue`, no priority: BullMQ
 * takes jobs without a priority before prioritized ones) → `interactive_idle_p50_ms`. Then a batch of
 * 1,000 questions (100 with --quick) with a concurrency of 200, more than the workers' 2 × 20 slots, so
 * step jobs queue up; its runs get the batch default priority (BATCH_PRIORITY, 100). While it runs,
 * the same 10 interactive runs again → `interactive_during_batch_p50_ms`, and their ratio to idle.
 * Measures what the engine does with the run meta's `priority` field: once step jobs honour it, the
 * ratio should stay near 1; without it, interactive steps wait behind the batch's.
 *
 * Fairness between tenants: the same 10 runs from another tenant (`beta`), idle and
 * while the batch runs → `other_tenant_wait_p95_ms` (their wall time from enqueue to completed) and its
 * ratio to idle. Then the harder case, a flood of direct runs (no batch, no priority: 2,000, 300 with
 * --quick) from the first tenant, once with AGENTQ_TENANT_FAIR_SHARE off and once at its default, each
 * with the other tenant's 10 runs in the middle of it → `other_tenant_wait_p95_ms_flood_unfair` and
 * `other_tenant_wait_p95_ms_flood`. Then with weighted fairness (AGENTQ_TENANT_WEIGHTS; the workers
 * restarted with it, the clients given it): the same flood, the other tenant at weight 1 (`*:1`) and at
 * weight 4 (`beta:4`) → `other_tenant_wait_p95_ms_flood_weighted_1`, `…_weighted_4`; and both tenants
 * flooding at once with chain runs (20 steps of 100 ms each; 300 or 2,000 runs each, enqueued turn about),
 * the first at weight 3 and the other at 1 → `fairness_weighted_share`, the steps the
 * first tenant's runs committed per step of the other's over a window in which both had runs left (3 is
 * exact), beside `fairness_unweighted_share`, the same window with weights off.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient } from '../../producer/client/agent-client.js';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { loadConfig } from '../../shared/config/config.js';
import type { Message } from '../../shared/contracts/run-record.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedResponse,
} from '../../test/fakes/scripted-openai-server.js';
import { startWorkerProcess, type WorkerProcess } from '../eval/start-worker-process.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { percentile } from '../lib/stats.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODEL_LATENCY_MS = 200;
const WORKERS = 2;
const WORKER_CONCURRENCY = 20;
const BATCH_CONCURRENCY = 200;
const QUESTIONS = { quick: 100, full: 10_000 };
const FLOOD = { quick: 300, full: 2000 };
const INTERACTIVE_RUNS = 10;
/** The runs of the two tenants flooding at once: chain runs of this many steps, each this long (a short model call). */
const SHARE_STEPS = 20;
const SHARE_STEP_MS = 100;

/** Search once, then answer: two model requests per run, each after MODEL_LATENCY_MS. */
function ragScript(request: ScriptedChatRequest): ScriptedResponse {
  const messages = request.body.messages as unknown as Message[];
  if (!messages.some((message) => message.role === 'tool')) {
    const question = messages.find((message) => message.role === 'user')?.content ?? '';
    return { delayMs: MODEL_LATENCY_MS, toolCalls: [{ name: 'search', arguments: { query: String(question) } }] };
  }
  return {
    delayMs: MODEL_LATENCY_MS,
    toolCalls: [{ name: 'final_answer', arguments: { answer: 'The handbook says so.', citations: [] } }],
  };
}

async function runPriority({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  const work = mkdtempSync(join(tmpdir(), 'agentq-bench-priority-'));
  const model = await startScriptedOpenAIServer({ script: ragScript });
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchp${id}`,
    AGENTQ_QUEUE_PREFIX: `benchpq${id}`,
    AGENTQ_DATA_DIR: join(work, 'data'),
    AGENTQ_LOG_LEVEL: 'info',
    AGENTQ_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'bench',
    LLM_MODEL: 'scripted-chat',
    EMBED_MODEL: '',
    EMBED_PROVIDER: 'none',
    // The flood is 2,000 unfinished runs of one tenant: over the default in-flight cap (1000), which would refuse it.
    AGENTQ_TENANT_MAX_INFLIGHT: '0',
  };
  const config = loadConfig({ ...process.env, ...env });
  const ingest = new IngestClient({ config });
  const client = new AgentClient({ config });
  // Another tenant, and the first tenant's flood with fair share off (its own client: the share is applied at enqueue).
  const other = new AgentClient({ config, tenant: 'beta' });
  const unfair = new AgentClient({ config: { ...config, tenantFairShare: 0 } });
  const workers: WorkerProcess[] = [];
  const closing: AgentClient[] = [];
  const collection = `handbook-${id}`;
  const interactive = async (by: AgentClient = client): Promise<number[]> => {
    // All at once, so they all meet the batch at its fullest (one after another, the last ones could miss it).
    return Promise.all(
      Array.from({ length: INTERACTIVE_RUNS }, async (_unused, i) => {
        const started = performance.now();
        const run = await by.enqueue({
          graph: 'rag-agent',
          input: { query: `how many vacation days, take ${i}?`, collection },
        });
        const done = await by.wait(run.id, { timeoutMs: 10 * 60_000 });
        if (done.status !== 'completed')
          throw new Error(`BENCH_RUN_FAILED: interactive run ${run.id} ended ${done.status}`);
        return performance.now() - started;
      }),
    );
  };
  try {
    for (let i = 0; i < WORKERS; i += 1) workers.push(await startWorkerProcess(root, env, log));
    const document = join(work, 'handbook.md');
    writeFileSync(
      document,
      '# Handbook\n\nEvery employee has 30 vacation days a year. Sick days are not counted against them.\n',
    );
    const ingested = await ingest.wait((await ingest.ingest([document], { collection })).batchId, {
      timeoutMs: 60_000,
    });
    if (ingested.failed > 0) throw new Error('BENCH_INGEST_FAILED: the handbook did not ingest');

    await interactive(); // warm-up: the workers' first runs pay for loading and connecting, not for queueing
    const idle = await interactive();
    const otherIdle = await interactive(other);
    const total = quick ? QUESTIONS.quick : QUESTIONS.full;
    const { batch } = await client.batches.submit({
      collection,
      questions: Array.from({ length: total }, (_unused, index) => ({
        id: `q${index + 1}`,
        question: `question ${index + 1} about vacation days`,
      })),
      options: { concurrency: BATCH_CONCURRENCY, graph: 'rag-agent' },
    });
    // Measure once the batch has filled its slots (its first runs are answered).
    while (((await client.batches.get(batch.id))?.progress.completed ?? 0) < Math.min(20, total / 5)) await sleep(50);
    // One after the other, each as many runs as on the idle system.
    const during = await interactive();
    const otherDuring = await interactive(other);
    const after = await client.batches.get(batch.id);
    if (after?.status !== 'running')
      log(
        `  warning: the batch finished before the interactive runs did (${JSON.stringify(after?.progress)}); use a bigger batch`,
      );
    await client.batches.cancel(batch.id).catch(() => undefined);

    // A flood of direct runs from the first tenant, the other tenant's runs (by `waiting`) in the middle of it.
    const flood = async (by: AgentClient, waiting = other): Promise<number[]> => {
      const count = quick ? FLOOD.quick : FLOOD.full;
      const ids: string[] = [];
      for (let i = 0; i < count; i += 1)
        ids.push((await by.enqueue({ graph: 'rag-agent', input: { query: `flood ${i}`, collection } })).id);
      while (
        (await Promise.all(ids.slice(0, 20).map((runId) => client.get(runId)))).filter(
          (run) => run?.status === 'completed',
        ).length < 10
      )
        await sleep(50);
      const waits = await interactive(waiting);
      const left = await Promise.all(ids.map((runId) => client.get(runId)));
      if (left.filter((run) => run?.status === 'queued').length < count / 4)
        log(`  warning: the flood had mostly drained before the other tenant's runs finished; use a bigger flood`);
      for (let i = 0; i < ids.length; i += 100)
        await Promise.all(ids.slice(i, i + 100).map((runId) => client.cancel(runId).catch(() => undefined)));
      // Let the cancelled runs' queued steps drain (each ends at once) before the next phase.
      await sleep(3000);
      return waits;
    };
    const floodUnfair = await flood(unfair);
    const floodFair = await flood(client);
    const restart = async (weights: string) => {
      await Promise.all(workers.splice(0).map((worker) => worker.stop()));
      const weighted = { ...env, AGENTQ_TENANT_WEIGHTS: weights };
      for (let i = 0; i < WORKERS; i += 1) workers.push(await startWorkerProcess(root, weighted, log));
      const config = loadConfig({ ...process.env, ...weighted });
      const clients = [new AgentClient({ config }), new AgentClient({ config, tenant: 'beta' })] as const;
      closing.push(...clients);
      return clients;
    };
    const floodWeighted: Record<string, number[]> = {};
    for (const weights of ['*:1', 'beta:4']) {
      const [flooder, waiting] = await restart(weights);
      floodWeighted[weights] = await flood(flooder, waiting);
    }
    const unweightedShare = await bothFlood([unfair, other], quick ? FLOOD.quick : FLOOD.full, log);
    const weightedShare = await bothFlood(
      await restart(`${config.tenant}:3,beta:1`),
      quick ? FLOOD.quick : FLOOD.full,
      log,
    );

    const idleP50 = percentile(idle, 50);
    const duringP50 = percentile(during, 50);
    record('priority_batch_questions', total);
    record('interactive_idle_p50_ms', idleP50);
    record('interactive_during_batch_p50_ms', duringP50);
    record('interactive_during_batch_p95_ms', percentile(during, 95));
    record('interactive_during_batch_vs_idle', duringP50 / idleP50);
    record('interactive_during_batch_batch_still_running', after?.status === 'running' ? 1 : 0);
    const otherIdleP95 = percentile(otherIdle, 95);
    record('other_tenant_idle_p95_ms', otherIdleP95);
    record('other_tenant_wait_p95_ms', percentile(otherDuring, 95));
    record('other_tenant_wait_vs_idle', percentile(otherDuring, 95) / otherIdleP95);
    record('fairness_flood_runs', quick ? FLOOD.quick : FLOOD.full);
    record('other_tenant_wait_p95_ms_flood_unfair', percentile(floodUnfair, 95));
    record('other_tenant_wait_p95_ms_flood', percentile(floodFair, 95));
    record('other_tenant_wait_flood_vs_idle', percentile(floodFair, 95) / otherIdleP95);
    record('other_tenant_wait_flood_unfair_vs_idle', percentile(floodUnfair, 95) / otherIdleP95);
    record('other_tenant_wait_p95_ms_flood_weighted_1', percentile(floodWeighted['*:1']!, 95));
    record('other_tenant_wait_p95_ms_flood_weighted_4', percentile(floodWeighted['beta:4']!, 95));
    record('other_tenant_wait_flood_weighted_1_vs_idle', percentile(floodWeighted['*:1']!, 95) / otherIdleP95);
    record('other_tenant_wait_flood_weighted_4_vs_idle', percentile(floodWeighted['beta:4']!, 95) / otherIdleP95);
    record('fairness_unweighted_share', unweightedShare);
    record('fairness_weighted_share', weightedShare);
  } finally {
    await Promise.all([client, other, unfair, ingest, ...closing].map((each) => each.close()));
    await Promise.all(workers.map((worker) => worker.stop()));
    await model.close();
    rmSync(work, { recursive: true, force: true });
  }
  return figures;
}

/**
 * Both tenants flood at once (`count` chain runs each of SHARE_STEPS steps, enqueued turn about): → the
 * steps the first tenant's runs committed per step of the second's between the moments the two together
 * had committed `count` steps and `3 × count` (past the start; a small part of either tenant's work, so
 * neither runs short of waiting steps, which would hand its share to the other). The runs are cancelled after.
 */
async function bothFlood(
  [first, second]: readonly [AgentClient, AgentClient],
  count: number,
  log: (line: string) => void,
): Promise<number> {
  const ids: [string[], string[]] = [[], []];
  // Turn about, so that neither has the workers to itself while the other's runs are being enqueued.
  for (let i = 0; i < count; i += 1)
    for (const [index, by] of [first, second].entries())
      ids[index]!.push(
        (await by.enqueue({ graph: 'chain', input: { steps: SHARE_STEPS, sleepMs: SHARE_STEP_MS } })).id,
      );
  const progress = async (runs: string[], by: AgentClient) => {
    // 200 at a time: thousands of reads at once, every second, would load the Redis being measured.
    const metas = [];
    for (let i = 0; i < runs.length; i += 200)
      metas.push(...(await Promise.all(runs.slice(i, i + 200).map((runId) => by.get(runId)))));
    return {
      steps: metas.reduce((sum, run) => sum + (run?.stepCount ?? 0), 0),
      left: metas.filter((run) => run?.status === 'queued' || run?.status === 'running').length,
    };
  };
  const reach = async (total: number) => {
    for (;;) {
      const seen = [await progress(ids[0], first), await progress(ids[1], second)] as const;
      if (seen[0].steps + seen[1].steps >= total) return seen;
      await sleep(1000);
    }
  };
  const from = await reach(count);
  const seen = await reach(3 * count);
  if (seen[0].left === 0 || seen[1].left === 0)
    log(`  warning: a tenant's flood drained within the window (${JSON.stringify(seen)}); use a bigger flood`);
  for (const [index, by] of [first, second].entries())
    for (let i = 0; i < ids[index]!.length; i += 100)
      await Promise.all(ids[index]!.slice(i, i + 100).map((runId) => by.cancel(runId).catch(() => undefined)));
  await sleep(3000);
  return (seen[0].steps - from[0].steps) / Math.max(1, seen[1].steps - from[1].steps);
}

export const prioritySection: BenchSection = { name: 'priority', run: runPriority };
