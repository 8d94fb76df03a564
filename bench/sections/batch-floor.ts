/**
 * The `batch-floor` section: how close a batch of questions comes to the floor the model's latency
 * sets. 500 questions of ../shared/eval/squad-v1.1-dev12 (100 with --quick) are submitted as one batch
 * (`client.batches.submit`, as `POST /v1/batches` does) with a fixed concurrency of 20; each is a
 * `rag-agent` run in model mode on two `agentq worker` processes, against the scripted OpenAI-compatible
 * server answering every chat request after 200 ms (search once, then answer citing the first passage
 * shown). Retrieval is lexical (no EMBED_MODEL), so the model is the only thing that waits.
 *
 * `batch_wall_vs_floor` = wall time (submit → the batch's `finishedAt`) ÷ (model requests the scripted
 * server actually received × 200 ms ÷ concurrency). 1 would mean the concurrency slots were never idle
 * between model calls: everything else (dispatch, intake, searches, commits, hand-offs) is the excess.
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
import { ID_PATTERN } from '../../shared/contracts/ids.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { Redis } from 'ioredis';
import {
  startScriptedOpenAIServer,
  type ScriptedOpenAIServer as ScriptedModel,
  type ScriptedChatRequest,
  type ScriptedResponse,
} from '../../test/fakes/scripted-openai-server.js';
import { readQuestions, resolveEvalSet } from '../eval/eval-set.js';
import { startWorkerProcess, type WorkerProcess } from '../eval/start-worker-process.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { percentileFigures } from '../lib/question-timeline.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SET = 'squad-v1.1-dev12';
const MODEL_LATENCY_MS = 200;
const CONCURRENCY = 20;
/** Worker processes: a question's own work (retrieval, ranking, parsing its state) is CPU, and one process has one core. */
const WORKERS = 2;
const QUESTIONS = { quick: 100, full: 500 };

/**
 * The scripted model's part in a rag-agent run: with no search result in the conversation yet, search
 * for the question; after one, answer citing the first passage shown. Two model requests per question.
 */
function ragScript(request: ScriptedChatRequest): ScriptedResponse {
  const messages = request.body.messages as unknown as Message[];
  const toolResult = messages.filter((message) => message.role === 'tool').at(-1);
  if (!toolResult) {
    const question = messages.find((message) => message.role === 'user')?.content ?? '';
    return { delayMs: MODEL_LATENCY_MS, toolCalls: [{ name: 'search', arguments: { query: String(question) } }] };
  }
  const id = /^\[([0-9a-f]{6})\]/m.exec(String(toolResult.content ?? ''))?.[1];
  const citations = id ? [id] : [];
  return {
    delayMs: MODEL_LATENCY_MS,
    toolCalls: [
      { name: 'final_answer', arguments: { answer: id ? `The passage says so [${id}].` : 'Not found.', citations } },
    ],
  };
}

/**
 * Each model step's time beyond the model's own, split at the scripted server's clock (one machine: its
 * `Date.now()` and Redis's stream ids share a clock): `pre` from the step's start event to the request's
 * arrival, `post` from the answer's last byte to the step's end event (which the commit writes, after any
 * inline step the job runs after it). p50/p90 ms over the calls, for the first and the second model step.
 */
async function modelCallTimeline(
  redisUrl: string,
  keyPrefix: string,
  { batchId, questions, model }: { batchId: string; questions: { question: string }[]; model: ScriptedModel },
): Promise<Record<string, number>> {
  const indexOf = new Map<string, number>();
  questions.forEach((question, index) => {
    if (!indexOf.has(question.question)) indexOf.set(question.question, index);
  });
  const segments = new Map<string, number[]>();
  const add = (name: string, ms: number) => segments.set(name, [...(segments.get(name) ?? []), ms]);
  const redis = new Redis(redisUrl);
  try {
    const eventKeys = new Map<string, string>();
    for await (const keys of redis.scanStream({
      match: `${keyPrefix}:*:run:${batchId}.i*:events`,
      count: 1000,
    }) as AsyncIterable<string[]>)
      for (const key of keys) eventKeys.set(key.slice(key.lastIndexOf('.i') + 2, -':events'.length), key);
    const byRun = new Map<string, ScriptedChatRequest[]>();
    for (const request of model.chatRequests()) {
      const messages = request.body.messages as unknown as Message[];
      const question = String(messages.find((message) => message.role === 'user')?.content ?? '');
      const key = eventKeys.get(String(indexOf.get(question)));
      if (key) byRun.set(key, [...(byRun.get(key) ?? []), request]);
    }
    for (const [key, requests] of byRun) {
      if (requests.length !== 2) continue;
      const events = (await redis.xrange(key, '-', '+')).map(([id, fields]) => ({
        at: Number(id.split('-')[0]),
        type: fields[fields.indexOf('type') + 1],
      }));
      const starts = events.filter((event) => event.type === 'step-start').map((event) => event.at);
      const ends = events.filter((event) => event.type === 'step-end').map((event) => event.at);
      if (starts.length !== 3 || ends.length !== 3) continue;
      const [first, second] = requests.sort((a, b) => a.receivedAt - b.receivedAt) as [
        ScriptedChatRequest,
        ScriptedChatRequest,
      ];
      add('first_pre', first.receivedAt - starts[0]!);
      add('first_model', (first.answeredAt ?? first.receivedAt) - first.receivedAt - MODEL_LATENCY_MS);
      add('first_post', ends[0]! - (first.answeredAt ?? first.receivedAt));
      add('second_pre', second.receivedAt - starts[2]!);
      add('second_model', (second.answeredAt ?? second.receivedAt) - second.receivedAt - MODEL_LATENCY_MS);
      add('second_post', ends[2]! - (second.answeredAt ?? second.receivedAt));
    }
  } finally {
    redis.disconnect();
  }
  return percentileFigures('batch_step', segments);
}

async function runBatchFloor({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  const set = resolveEvalSet(SET, resolve(root, '../shared/eval'));
  const questions = readQuestions(set.questionsFile, quick ? QUESTIONS.quick : QUESTIONS.full);
  const work = mkdtempSync(join(tmpdir(), 'agentq-bench-batch-'));
  const model = await startScriptedOpenAIServer({ script: ragScript });
  const id = randomBytes(3).toString('hex');
  const env = {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchb${id}`,
    AGENTQ_QUEUE_PREFIX: `benchbq${id}`,
    AGENTQ_DATA_DIR: join(work, 'data'),
    // The worker says it started at info level; only its errors are passed on.
    AGENTQ_LOG_LEVEL: 'info',
    // Room for every run of the batch at once: the batch's concurrency is the only limit measured.
    AGENTQ_WORKER_CONCURRENCY: String(2 * CONCURRENCY),
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
    const collection = `squad-${id}`;
    const ingested = await ingest.wait((await ingest.ingest([set.docsDir], { collection })).batchId, {
      timeoutMs: 10 * 60_000,
    });
    if (ingested.failed > 0)
      throw new Error(
        `BENCH_INGEST_FAILED: ${ingested.failed} of ${ingested.total} documents of ${SET} failed to ingest`,
      );
    log(
      `${questions.length} questions of ${SET} (${ingested.done} documents ingested), batch concurrency ${CONCURRENCY}, model latency ${MODEL_LATENCY_MS} ms`,
    );
    model.reset();
    const submittedAt = Date.now();
    const { batch } = await client.batches.submit({
      collection,
      questions: questions.map((question, index) => ({
        id: ID_PATTERN.test(question.id) ? question.id : `q${index + 1}`,
        question: question.question,
      })),
      options: { concurrency: CONCURRENCY, graph: 'rag-agent' },
    });
    let current = batch;
    let lastLog = performance.now();
    while (current.status === 'running') {
      await sleep(100);
      current = (await client.batches.get(batch.id)) ?? current;
      if (performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        log(`  answered ${current.progress.completed + current.progress.failed}/${current.progress.total}`);
      }
    }
    // The batch's own finish time, so the polling interval adds nothing.
    const wallSeconds = (Date.parse(current.finishedAt ?? new Date().toISOString()) - submittedAt) / 1000;
    if (current.progress.completed !== questions.length) {
      throw new Error(
        `BENCH_BATCH_INCOMPLETE: ${current.progress.completed} of ${questions.length} questions completed (${JSON.stringify(current.progress)})`,
      );
    }
    const requests = model.chatRequests().length;
    const floorSeconds = (requests * MODEL_LATENCY_MS) / 1000 / CONCURRENCY;
    record('batch_questions', questions.length);
    record('batch_concurrency', CONCURRENCY);
    record('batch_model_requests', requests);
    record('batch_wall_s', wallSeconds);
    record('batch_floor_s', floorSeconds);
    record('batch_wall_vs_floor', wallSeconds / floorSeconds);
    for (const [name, value] of Object.entries(
      await modelCallTimeline(redisUrl, env.AGENTQ_KEY_PREFIX, { batchId: batch.id, questions, model }),
    ))
      record(name, value);
  } finally {
    await Promise.all([client.close(), ingest.close()]);
    await Promise.all(workers.map((worker) => worker.stop()));
    await model.close();
    rmSync(work, { recursive: true, force: true });
  }
  return figures;
}

export const batchFloorSection: BenchSection = { name: 'batch-floor', run: runBatchFloor };
