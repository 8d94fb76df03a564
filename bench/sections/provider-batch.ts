/**
 * The `provider-batch` section: a 500-question batch over the SEC 10-Q filings
 * (../shared/eval/sec10q-docugami, its 146 questions repeated; 100 with --quick) answered by `rag-agent`
 * in model mode on two `agentq worker` processes, twice on the same ingest and scripted server:
 * - live: `options.concurrency` 20, every chat request answered after 200 ms;
 * - through the provider's Batch API (`providerBatch: true`, every question in flight): each provider
 *   batch in progress for PROVIDER_DELAY_MS (the scripted provider delay), its lines answered by the
 *   same script.
 * Figures: live chat requests during the provider-batch phase (0), provider batches created vs the model
 * turns of a run (2: search, then answer), step jobs active while the provider works (the slots parked
 * runs hold: 0), Redis bytes per parked run (the call's record and request line; and the run's whole
 * footprint with its delayed job), wall time minus the provider delay vs the live batch, cost at batch
 * prices vs live prices, and worker CPU per question in each phase.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { AgentClient } from '../../producer/client/agent-client.js';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { stepJobId } from '../../shared/contracts/job-schema.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import type { BatchRecord } from '../../shared/operations/batches/batch-schema.js';
import type { Keys } from '../../shared/store/keys.js';
import { startScriptedOpenAIServer } from '../../test/fakes/scripted-openai-server.js';
import { scriptedRagModel } from '../lib/scripted-rag-model.js';
import { readQuestions, resolveEvalSet } from '../eval/eval-set.js';
import { cpuSecondsOf, startWorkerProcess, type WorkerProcess } from '../eval/start-worker-process.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { redisCpuUs } from '../lib/process-meter.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SET = 'sec10q-docugami';
const MODEL_LATENCY_MS = 200;
const LIVE_CONCURRENCY = 20;
const PROVIDER_DELAY_MS = { quick: 2000, full: 10_000 };
const WORKERS = 2;
const QUESTIONS = { quick: 100, full: 500 };
/** gpt-4o-mini's live prices (USD per 1M tokens); batch prices are half (the AGENTQ_BATCH_PRICES default). */
const PRICES = 'scripted-chat:0.15:0.6';

interface Phase {
  batch: BatchRecord;
  wallSeconds: number;
  workerCpuSeconds: number;
  redisCpuSeconds: number;
}

async function runProviderBatch({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  const set = resolveEvalSet(SET, resolve(root, '../shared/eval'));
  const pool = readQuestions(set.questionsFile);
  const count = quick ? QUESTIONS.quick : QUESTIONS.full;
  const questions = Array.from({ length: count }, (_, index) => ({
    id: `q${index + 1}`,
    question:
      index < pool.length
        ? pool[index]!.question
        : `${pool[index % pool.length]!.question} (${Math.floor(index / pool.length) + 1})`,
  }));
  const providerDelayMs = quick ? PROVIDER_DELAY_MS.quick : PROVIDER_DELAY_MS.full;
  const work = mkdtempSync(join(tmpdir(), 'agentq-bench-pbatch-'));
  const model = await startScriptedOpenAIServer({
    script: scriptedRagModel(MODEL_LATENCY_MS),
    batchApi: { processingMs: providerDelayMs },
  });
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchp${id}`,
    AGENTQ_QUEUE_PREFIX: `benchpq${id}`,
    AGENTQ_DATA_DIR: join(work, 'data'),
    AGENTQ_LOG_LEVEL: 'info',
    AGENTQ_WORKER_CONCURRENCY: String(2 * LIVE_CONCURRENCY),
    AGENTQ_PRICES: PRICES,
    AGENTQ_PROVIDER_BATCH_POLL_MS: '250',
    // The bench's clients on a loaded machine: not the producer's fail-fast 750 ms.
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '10000',
    // A batch that can wait: its provider batches are sent when every run in flight waits (one per turn),
    // not when a window closes on a batch still arriving (500 runs take a while to reach their first call).
    AGENTQ_PROVIDER_BATCH_FLUSH_MS: '600000',
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'bench',
    LLM_MODEL: 'scripted-chat',
    EMBED_MODEL: '',
    EMBED_PROVIDER: 'none',
  };
  const config = loadConfig({ ...process.env, ...env });
  const ingest = new IngestClient({ config });
  const client = new AgentClient({ config });
  const redis = new Redis(redisUrl);
  const workers: WorkerProcess[] = [];
  try {
    for (let i = 0; i < WORKERS; i += 1) workers.push(await startWorkerProcess(root, env, log));
    const collection = `sec-${id}`;
    const ingested = await ingest.wait((await ingest.ingest([set.docsDir], { collection })).batchId, {
      timeoutMs: 15 * 60_000,
    });
    if (ingested.failed > 0)
      throw new Error(`BENCH_INGEST_FAILED: ${ingested.failed} of ${ingested.total} documents of ${SET} failed`);
    log(
      `${questions.length} questions over ${SET} (${ingested.done} filings); live: concurrency ${LIVE_CONCURRENCY}, ${MODEL_LATENCY_MS} ms a request; provider batches: ${providerDelayMs} ms each`,
    );
    const cpu = () => workers.reduce((sum, worker) => sum + (cpuSecondsOf(worker.child.pid)?.all ?? 0), 0);
    const phase = async (providerBatch: boolean, watch?: (batch: BatchRecord) => Promise<void>): Promise<Phase> => {
      model.reset();
      const [cpuBefore, redisBefore] = [cpu(), await redisCpuUs(redis)];
      const submittedAt = Date.now();
      const { batch } = await client.batches.submit({
        collection,
        questions,
        options: { graph: 'rag-agent', ...(providerBatch ? {} : { concurrency: LIVE_CONCURRENCY }) },
        providerBatch,
      });
      let current = batch;
      let lastLog = performance.now();
      while (current.status === 'running') {
        await sleep(100);
        current = (await client.batches.get(batch.id)) ?? current;
        await watch?.(current);
        if (performance.now() - lastLog > 5000) {
          lastLog = performance.now();
          log(`  answered ${current.progress.completed + current.progress.failed}/${current.progress.total}`);
        }
      }
      if (current.progress.completed !== questions.length)
        throw new Error(`BENCH_BATCH_INCOMPLETE: ${JSON.stringify(current.progress)} (providerBatch ${providerBatch})`);
      return {
        batch: current,
        wallSeconds: (Date.parse(current.finishedAt ?? new Date().toISOString()) - submittedAt) / 1000,
        workerCpuSeconds: cpu() - cpuBefore,
        redisCpuSeconds: ((await redisCpuUs(redis)) - redisBefore) / 1e6,
      };
    };

    const live = await phase(false);
    const liveRequests = model.chatRequests().length;
    const liveCost = await batchRunsCost(client, live.batch);

    let activeWhileWaiting = 0;
    let parkedBytes: { extra: number; whole: number; parked: number } | undefined;
    let measuringUs = 0;
    const pb = await phase(true, async (current) => {
      const progress = current.providerBatch;
      // While the provider works on a batch holding every run's call: what those waiting runs hold.
      if (!progress || !progress.batches.some((entry) => entry.status === 'in_progress')) return;
      activeWhileWaiting = Math.max(activeWhileWaiting, await activeStepJobs(config, client));
      if (!parkedBytes && progress.parked === questions.length) {
        // Thousands of MEMORY USAGE calls: their Redis CPU is the bench's, not the batch's.
        const before = await redisCpuUs(redis);
        parkedBytes = await bytesOfParked(redis, client.store.keys, config, current);
        measuringUs += (await redisCpuUs(redis)) - before;
      }
    });
    const created = model.batchApi!.batches;
    log(`provider batches: ${created.map((entry) => `${entry.lines.length} requests, ${entry.status}`).join('; ')}`);
    record('pb_questions', questions.length);
    record('pb_live_chat_requests', model.chatRequests().length);
    record('pb_provider_batches', created.length);
    record('pb_model_turns_per_run', 2);
    record('pb_provider_batches_beyond_turns', created.length - 2);
    record(
      'pb_requests_in_provider_batches',
      created.reduce((sum, entry) => sum + entry.lines.length, 0),
    );
    record('pb_slots_held_while_waiting', activeWhileWaiting);
    if (parkedBytes) {
      record('pb_redis_bytes_per_parked_run', parkedBytes.extra / parkedBytes.parked);
      record('pb_redis_bytes_per_parked_run_whole', parkedBytes.whole / parkedBytes.parked);
    }
    const providerDelaySeconds = (created.length * providerDelayMs) / 1000;
    record('pb_wall_s', pb.wallSeconds);
    record('pb_provider_delay_s', providerDelaySeconds);
    record('pb_wall_minus_delay_s', pb.wallSeconds - providerDelaySeconds);
    record('pb_live_wall_s', live.wallSeconds);
    record('pb_live_model_requests', liveRequests);
    record('pb_wall_minus_delay_vs_live', (pb.wallSeconds - providerDelaySeconds) / live.wallSeconds);
    record('pb_cost_usd', pb.batch.providerBatch?.costUsd ?? Number.NaN);
    record('pb_cost_at_live_prices_usd', pb.batch.providerBatch?.liveCostUsd ?? Number.NaN);
    record('pb_live_batch_cost_usd', liveCost);
    record('pb_cost_vs_live', (pb.batch.providerBatch?.costUsd ?? Number.NaN) / liveCost);
    record('pb_worker_cpu_ms_per_question', (pb.workerCpuSeconds * 1000) / questions.length);
    record('pb_live_worker_cpu_ms_per_question', (live.workerCpuSeconds * 1000) / questions.length);
    record('pb_redis_cpu_ms_per_question', (pb.redisCpuSeconds * 1000 - measuringUs / 1000) / questions.length);
    record('pb_live_redis_cpu_ms_per_question', (live.redisCpuSeconds * 1000) / questions.length);
  } finally {
    await Promise.all([client.close(), ingest.close()]);
    redis.disconnect();
    await Promise.all(workers.map((worker) => worker.stop()));
    await model.close();
    rmSync(work, { recursive: true, force: true });
  }
  return figures;
}

/** Step jobs active now over every shard's step queue. */
async function activeStepJobs(config: Config, client: AgentClient): Promise<number> {
  let active = 0;
  for (let shard = 0; shard < config.shards; shard += 1) {
    const key = `${stepQueuePrefix(config.queuePrefix, shard, config.shards)}:${STEP_QUEUE}:active`;
    active += await client.store.redis.llen(key);
  }
  return active;
}

/**
 * Redis bytes of the parked runs (MEMORY USAGE): what parking adds (the call records, request lines, the
 * pending set and the provider batch's record), and the runs' whole footprint (their keys and delayed step job) on top.
 */
async function bytesOfParked(redis: Redis, keys: Keys, config: Config, batch: BatchRecord) {
  const pbKeys = keys.providerBatch(batch.id);
  const flushIds = await redis.zrange(pbKeys.flushes, '0', '-1');
  const extraKeys = [
    pbKeys.calls,
    pbKeys.bodies,
    pbKeys.pending,
    pbKeys.flushes,
    pbKeys.seq,
    ...flushIds.map(pbKeys.flush),
  ];
  const usage = async (key: string) => Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  let extra = 0;
  for (const key of extraKeys) extra += await usage(key);
  let whole = extra;
  for (let index = 0; index < batch.progress.total; index += 1) {
    const runId = `${batch.id}.i${index}`;
    for (const key of keys.runAll(runId)) whole += await usage(key);
    const shard = shardOf(runId, config.shards);
    whole += await usage(
      `${stepQueuePrefix(config.queuePrefix, shard, config.shards)}:${STEP_QUEUE}:${stepJobId(runId, 0, 0)}`,
    );
  }
  return { extra, whole, parked: batch.progress.total };
}

/** What a live batch's runs cost (their usage at AGENTQ_PRICES). */
async function batchRunsCost(client: AgentClient, batch: BatchRecord): Promise<number> {
  let cost = 0;
  for (let index = 0; index < batch.progress.total; index += 1)
    cost += (await client.get(`${batch.id}.i${index}`))?.usage.costUsd ?? 0;
  return cost;
}

export const providerBatchSection: BenchSection = { name: 'provider-batch', run: runProviderBatch };
