import { z } from 'zod';
import { ID_PATTERN } from '../../contracts/ids.js';
import { BATCH_PRIORITY, MAX_PRIORITY } from '../../contracts/job-schema.js';

const id = z.string().regex(ID_PATTERN, "must be 1-128 characters of letters, digits, '_', '.' or '-'");

/** One question of a batch; `id` defaults to its 1-based position. */
export const batchQuestionSchema = z
  .object({ id: id.optional(), question: z.string().trim().min(1, 'question must not be empty').max(20_000) })
  .strict();

/**
 * A batch of questions answered as one run each (DESIGN §6 `POST /v1/batches`). The per-run input is the
 * RAG input of DESIGN §4: `{query: question, collection, max_iterations?, citations?}`.
 */
export const batchRequestSchema = z
  .object({
    collection: id.default('default'),
    questions: z.array(batchQuestionSchema).min(1, 'a batch needs at least one question').max(10_000),
    options: z
      .object({
        /** Runs of this batch in flight at once, so one batch cannot starve other tenants. @default 8 */
        concurrency: z.number().int().min(1).max(200).default(8),
        max_iterations: z.number().int().min(1).max(10).optional(),
        citations: z.boolean().optional(),
        /** The graph that answers each question. @default 'rag-agent' */
        graph: z.string().min(1).max(128).default('rag-agent'),
        /** BullMQ priority of the questions' runs (1 most urgent): behind runs without one by default. @default 100 */
        priority: z
          .number()
          .int(`priority must be a whole number from 1 (most urgent) to ${MAX_PRIORITY}`)
          .min(1, `priority must be a whole number from 1 (most urgent) to ${MAX_PRIORITY}`)
          .max(MAX_PRIORITY, `priority must be a whole number from 1 (most urgent) to ${MAX_PRIORITY}`)
          .default(BATCH_PRIORITY),
      })
      .strict()
      .default({ concurrency: 8, graph: 'rag-agent', priority: BATCH_PRIORITY }),
  })
  .strict();
export type BatchRequest = z.input<typeof batchRequestSchema>;
export type ParsedBatchRequest = z.output<typeof batchRequestSchema>;

export const BATCH_STATUSES = ['running', 'completed', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export interface BatchProgress {
  total: number;
  queued: number;
  running: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export interface BatchRecord {
  id: string;
  tenant: string;
  status: BatchStatus;
  graph: string;
  collection: string;
  concurrency: number;
  progress: BatchProgress;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** One answered (or not yet answered) question. */
export interface BatchResult {
  id: string;
  question: string;
  runId: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  answer: string | null;
  sources: unknown[];
  error: { code: string; message: string } | null;
  output: unknown;
}
