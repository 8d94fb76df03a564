import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { formatBatchResultsCsv, formatBatchResultsJsonl } from './format-batch-results.js';
import type { AgentClient } from '../client/agent-client.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { BatchRecord, BatchResult } from '../../shared/operations/batches/batch-schema.js';
import { EXIT, UsageError } from './producer-commands.js';
import { parseQuestionLines } from './parse-question-lines.js';
import { createProgressBar } from './progress-bar.js';
import { describePlan, registerBatchStatusCommand } from './batch-status-command.js';
import type { BatchMode } from '../../shared/operations/batches/autopilot-plan.js';

/** `--budget`: a positive number of USD. */
function parseBudget(value: string): number {
  const usd = Number(value);
  if (!Number.isFinite(usd) || usd <= 0)
    throw new UsageError(`--budget must be a number of USD above 0, got '${value}'`);
  return usd;
}

interface BatchOptions {
  collection: string;
  out?: string;
  format?: string;
  concurrency?: number;
  priority?: number;
  idempotencyKey?: string;
  graph?: string;
  maxIterations?: number;
  citations?: boolean;
  providerBatch?: boolean;
  answerCache?: boolean;
  deadline?: string;
  budget?: number;
  modes?: string;
  pollMs: number;
  outageMs: number;
}

function readQuestions(file: string): { id?: string; question: string }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return parseQuestionLines(text);
  } catch (error) {
    // `file:line …`, as compilers name a place in a file.
    throw new UsageError((error as Error).message.replace(/^line (\d+)/, `${file}:$1`));
  }
}

/**
 * Polls the batch until it is no longer running, then reads its results; both ride out a Redis restart
 * of up to --outage-ms (the batch goes on in the workers meanwhile). Past that, the error says how to
 * pick the batch up again.
 */
async function followBatch(
  client: AgentClient,
  batch: BatchRecord,
  options: BatchOptions,
): Promise<{ current: BatchRecord; results: BatchResult[] }> {
  const read = <T>(what: () => Promise<T>) =>
    client.throughOutage(what, { outageMs: options.outageMs }).catch((error: unknown) => {
      throw lostBatch(batch.id, options, error);
    });
  const bar = createProgressBar(process.stderr, `batch ${batch.id}`, 'questions');
  let current = batch;
  for (;;) {
    const { progress } = current;
    bar.update({ done: progress.completed, failed: progress.failed + progress.cancelled, total: progress.total });
    if (current.status !== 'running') break;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    current = (await read(() => client.batches.get(batch.id))) ?? current;
  }
  bar.finish();
  return { current, results: (await read(() => client.batches.results(batch.id))) ?? [] };
}

/** The error of a batch whose progress could not be read: what failed, and how to pick the batch up again. */
function lostBatch(batchId: string, options: BatchOptions, error: unknown): unknown {
  if (!AgentqError.isInstance(error) || error.code !== 'UNAVAILABLE') return error;
  const again = options.idempotencyKey
    ? `run this command again with --idempotency-key ${options.idempotencyKey} to collect its answers (none is answered twice)`
    : `its answers download from the dashboard's /batches/${batchId} page once it is done`;
  return new AgentqError(
    'UNAVAILABLE',
    `batch ${batchId}: ${error.message}, so its answers were not written; the batch goes on in the workers: \`agentq batch status ${batchId}\` shows its progress, and ${again}`,
    { retryable: true, cause: error },
  );
}

/**
 * `agentq batch questions.jsonl --collection X --out answers.jsonl`: one run per question through the
 * queue, a progress bar with an ETA on stderr (TTY only), the results in --out (JSON Lines or CSV),
 * a JSON summary on stdout. Exit 1 when any question failed or was cancelled.
 */
export function registerBatchCommand(
  program: Command,
  clientFactory: () => Promise<AgentClient>,
  parseCount: (name: string) => (value: string) => number,
  setExitCode: (code: number) => void,
): void {
  const batchCommand = program
    .command('batch')
    .description('answer every question of a JSONL file ({"id"?, "question"} per line) as one batch')
    .argument('<file>', 'questions, one JSON object per line')
    .option('--collection <name>', 'the document collection to answer from', 'default')
    .option('--out <file>', 'write the results here (JSON Lines, or CSV for a .csv name); default: stdout')
    .option('--format <format>', 'jsonl or csv (default: from --out, else jsonl)')
    .option(
      '--concurrency <n>',
      'runs of this batch at once (default 8; with --provider-batch, every question)',
      parseCount('--concurrency'),
    )
    .option(
      '--priority <n>',
      'BullMQ priority of its runs (default 100: behind runs without a priority)',
      parseCount('--priority'),
    )
    .option('--idempotency-key <key>', 'the same key resumes the same batch and answers nothing twice')
    .option('--graph <name>', 'the graph that answers each question (default rag-agent)')
    .option('--max-iterations <n>', 'rag-agent search iterations (1-10)', parseCount('--max-iterations'))
    .option('--citations', 'ask for citations in the answers')
    .option(
      '--provider-batch',
      "make the model calls through the provider's Batch API at batch prices (answers within its completion window, up to 24 h)",
    )
    .option(
      '--answer-cache',
      'answer questions asked before from the answer cache when the documents their answers cite are unchanged; store new answers there',
    )
    .option(
      '--deadline <when>',
      "finish by then: an ISO 8601 time or a duration ('45s', '90m', '6h', '2d'); plans the batch",
    )
    .option(
      '--budget <usd>',
      'spend at most this many USD: refused at submission when no mode fits, stopped before passing it',
      parseBudget,
    )
    .option(
      '--modes <list>',
      'the modes a plan may use, comma-separated: live,flex,batch (default: every mode the provider offers)',
    )
    .option('--poll-ms <ms>', 'how often to check progress', parseCount('--poll-ms'), 500)
    .option(
      '--outage-ms <ms>',
      'wait this long for Redis through an outage (a restart) before giving up; the batch goes on in the workers',
      parseCount('--outage-ms'),
      60_000,
    )
    .action(async (file: string, options: BatchOptions) => {
      const format = options.format ?? (options.out?.endsWith('.csv') ? 'csv' : 'jsonl');
      if (format !== 'jsonl' && format !== 'csv')
        throw new UsageError(`--format must be jsonl or csv, got '${format}'`);
      const questions = readQuestions(file);
      if (questions.length === 0) throw new UsageError(`${file} has no questions`);
      const client = await clientFactory();
      try {
        const { batch } = await client.batches.submit(
          {
            collection: options.collection,
            questions,
            options: {
              ...(options.concurrency ? { concurrency: options.concurrency } : {}),
              ...(options.priority ? { priority: options.priority } : {}),
              ...(options.graph ? { graph: options.graph } : {}),
              ...(options.maxIterations ? { max_iterations: options.maxIterations } : {}),
              ...(options.citations ? { citations: true } : {}),
            },
            ...(options.providerBatch ? { providerBatch: true } : {}),
            ...(options.answerCache ? { answerCache: true } : {}),
            ...(options.deadline ? { deadline: options.deadline } : {}),
            ...(options.budget === undefined ? {} : { budgetUsd: options.budget }),
            ...(options.modes ? { modes: options.modes.split(',').map((mode) => mode.trim()) as BatchMode[] } : {}),
          },
          options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {},
        );
        process.stderr.write(
          `batch ${batch.id}: ${batch.progress.total} questions${batch.providerBatch ? " (model calls through the provider's Batch API)" : ''}\n`,
        );
        if (batch.autopilot) process.stderr.write(`${describePlan(batch)}\n`);
        const { current, results } = await followBatch(client, batch, options);
        const text = format === 'csv' ? formatBatchResultsCsv(results) : formatBatchResultsJsonl(results);
        if (options.out) {
          writeFileSync(options.out, text);
          process.stdout.write(
            `${JSON.stringify({ batchId: batch.id, status: current.status, progress: current.progress, out: options.out })}\n`,
          );
        } else {
          process.stdout.write(text);
        }
        setExitCode(current.progress.failed + current.progress.cancelled > 0 ? EXIT.runFailed : EXIT.ok);
      } finally {
        await client.close();
      }
    });
  registerBatchStatusCommand(batchCommand, clientFactory);
}
