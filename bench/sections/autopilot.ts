/**
 * The `autopilot` section: the same SEC 10-Q questions (../shared/eval/sec10q-docugami, its 146 questions
 * repeated to 500; 100 with --quick) answered by `rag-agent` four ways on two `agentq worker` processes, one
 * ingest and one scripted model server that plays every mode:
 * - live: every call live (`modes: ['live']`), `options.concurrency` 20, each request answered after 200 ms;
 * - provider batch: every call through the provider's Batch API (`providerBatch: true`), each provider batch
 *   in progress for PROVIDER_DELAY_MS;
 * - flex: every call on the flex tier (`modes: ['flex']`): answered FLEX_EXTRA_MS later than live, and every
 *   FLEX_REFUSE_EVERY-th flex request refused for capacity (FLEX_UNAVAILABLE, retried on flex);
 * - autopilot: `deadline` DEADLINE_S after submission, every mode allowed: agentq plans and re-plans.
 * The server's prompt cache reports cached tokens as OpenAI does (a prefix ≥ 1024 tokens, 128-token steps,
 * per `prompt_cache_key`). Figures per way: cost (USD at the price table: live, flex and batch prices, cached
 * input at its rate), cost with every input token uncached, wall time, share of input tokens cached, deadline met
 * (1/0); and autopilot's cost against the cheapest fixed way that met the same deadline.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient } from '../../producer/client/agent-client.js';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { loadConfig } from '../../shared/config/config.js';
import type { BatchRecord, BatchRequest } from '../../shared/operations/batches/batch-schema.js';
import { startScriptedOpenAIServer } from '../../test/fakes/scripted-openai-server.js';
import { scriptedRagModel } from '../lib/scripted-rag-model.js';
import { readQuestions, resolveEvalSet } from '../eval/eval-set.js';
import { startWorkerProcess, type WorkerProcess } from '../eval/start-worker-process.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SET = 'sec10q-docugami';
const MODEL_LATENCY_MS = 200;
const CONCURRENCY = 20;
/** Search rounds per question (then an answer): the third request re-sends the first two turns, the prompt cache's share. */
const SEARCHES = 2;
const WORKERS = 2;
const QUESTIONS = { quick: 100, full: 500 };
/** The scripted provider's pace per mode: flex answers later and refuses every 10th; a provider batch takes its delay. */
const FLEX_EXTRA_MS = 600;
const FLEX_REFUSE_EVERY = 10;
const PROVIDER_DELAY_MS = { quick: 2000, full: 10_000 };
/** gpt-4o-mini's prices (USD per 1M tokens: input, output, cached input); flex and batch are half (their defaults). */
const PRICES = 'scripted-chat:0.15:0.6:0.075';

type Way = 'live' | 'batch' | 'flex' | 'autopilot';

interface Outcome {
  batch: BatchRecord;
  wallSeconds: number;
  deadlineMet: boolean;
}

async function runAutopilot({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
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
  const work = mkdtempSync(join(tmpdir(), 'agentq-bench-autopilot-'));
  const model = await startScriptedOpenAIServer({
    script: scriptedRagModel(MODEL_LATENCY_MS, { searches: SEARCHES }),
    batchApi: { processingMs: providerDelayMs },
    flex: { extraDelayMs: FLEX_EXTRA_MS, refuseEvery: FLEX_REFUSE_EVERY },
    promptCache: {},
  });
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `bencha${id}`,
    AGENTQ_QUEUE_PREFIX: `benchaq${id}`,
    AGENTQ_DATA_DIR: join(work, 'data'),
    AGENTQ_LOG_LEVEL: 'info',
    AGENTQ_WORKER_CONCURRENCY: String(2 * CONCURRENCY),
    AGENTQ_PRICES: PRICES,
    AGENTQ_FLEX: 'on',
    AGENTQ_PROVIDER_BATCH_POLL_MS: '250',
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '10000',
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
  const workers: WorkerProcess[] = [];
  try {
    for (let i = 0; i < WORKERS; i += 1) workers.push(await startWorkerProcess(root, env, log));
    const collection = `sec-${id}`;
    const ingested = await ingest.wait((await ingest.ingest([set.docsDir], { collection })).batchId, {
      timeoutMs: 15 * 60_000,
    });
    if (ingested.failed > 0)
      throw new Error(`BENCH_INGEST_FAILED: ${ingested.failed} of ${ingested.total} documents of ${SET} failed`);
    const answer = async (way: Way, extra: Partial<BatchRequest>, deadlineMs: number): Promise<Outcome> => {
      model.reset();
      const submittedAt = Date.now();
      const { batch } = await client.batches.submit({
        collection,
        questions,
        options: { graph: 'rag-agent', concurrency: CONCURRENCY },
        ...extra,
      } as BatchRequest);
      let current = batch;
      let lastLog = performance.now();
      while (current.status === 'running') {
        await sleep(200);
        current = (await client.batches.get(batch.id)) ?? current;
        if (performance.now() - lastLog > 5000) {
          lastLog = performance.now();
          const plan = current.autopilot
            ? `, plan ${current.autopilot.plan.mode} (${current.autopilot.plan.reason})`
            : '';
          log(
            `  ${way}: answered ${current.progress.completed + current.progress.failed}/${current.progress.total}${plan}`,
          );
        }
      }
      if (current.progress.completed !== questions.length)
        throw new Error(`BENCH_BATCH_INCOMPLETE: ${way}: ${JSON.stringify(current.progress)}`);
      const wallSeconds = (Date.parse(current.finishedAt ?? new Date().toISOString()) - submittedAt) / 1000;
      return { batch: current, wallSeconds, deadlineMet: wallSeconds * 1000 <= deadlineMs };
    };
    // The deadline every way is held to: three times what the live way takes here, measured first.
    const live = await answer('live', { modes: ['live'] }, Number.POSITIVE_INFINITY);
    const deadlineMs = Math.ceil(live.wallSeconds * 3) * 1000;
    live.deadlineMet = live.wallSeconds * 1000 <= deadlineMs;
    log(`deadline for every way: ${deadlineMs / 1000} s (three times the live way's ${live.wallSeconds} s)`);
    const outcomes: Record<Way, Outcome> = {
      live,
      batch: await answer(
        'batch',
        { providerBatch: true, options: { graph: 'rag-agent' } } as Partial<BatchRequest>,
        deadlineMs,
      ),
      flex: await answer('flex', { modes: ['flex'] }, deadlineMs),
      autopilot: await answer('autopilot', { deadline: `${deadlineMs / 1000}s` }, deadlineMs),
    };
    for (const [way, outcome] of Object.entries(outcomes) as [Way, Outcome][]) {
      const usage = outcome.batch.usage;
      record(`${way}_cost_usd`, usage.costUsd);
      record(`${way}_uncached_cost_usd`, usage.uncachedCostUsd);
      record(`${way}_wall_s`, outcome.wallSeconds);
      record(`${way}_cached_input_share`, usage.inputTokens > 0 ? usage.cachedInputTokens / usage.inputTokens : 0);
      record(`${way}_deadline_met`, outcome.deadlineMet ? 1 : 0);
      for (const mode of ['live', 'flex', 'batch'] as const) record(`${way}_calls_${mode}`, usage.calls[mode] ?? 0);
    }
    record('deadline_s', deadlineMs / 1000);
    const meeting = (['live', 'batch', 'flex'] as const).filter((way) => outcomes[way].deadlineMet);
    const cheapest = meeting.reduce<number>((low, way) => Math.min(low, outcomes[way].batch.usage.costUsd), Infinity);
    record('autopilot_cost_vs_cheapest_fixed_meeting_deadline', outcomes.autopilot.batch.usage.costUsd / cheapest);
  } finally {
    await Promise.all([client.close(), ingest.close()]);
    await Promise.all(workers.map((worker) => worker.stop()));
    await model.close();
    rmSync(work, { recursive: true, force: true });
  }
  return figures;
}

export const autopilotSection: BenchSection = { name: 'autopilot', run: runAutopilot };
