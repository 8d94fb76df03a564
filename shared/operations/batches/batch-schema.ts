import { z } from 'zod';
import { ID_PATTERN } from '../../contracts/ids.js';
import { BATCH_PRIORITY, MAX_PRIORITY } from '../../contracts/job-schema.js';

/** Runs of one batch in flight at most; and with `providerBatch`, whose waiting runs hold no worker. */
const MAX_CONCURRENCY = 200;
export const MAX_PROVIDER_BATCH_CONCURRENCY = 10_000;
/** A batch's concurrency when it names none. */
export const DEFAULT_CONCURRENCY = 8;

const id = z.string().regex(ID_PATTERN, "must be 1-128 characters of letters, digits, '_', '.' or '-'");

/** One question of a batch; `id` defaults to its 1-based position. */
const batchQuestionSchema = z
  .object({ id: id.optional(), question: z.string().trim().min(1, 'question must not be empty').max(20_000) })
  .strict();

/**
 * A batch of questions answered as one run each (`POST /v1/batches`, docs/reference/http-api.md). The per-run
 * input is the one RAG input of chat, batches and raw jobs (shared/retrieval/rag-input.ts): `{query: question,
 * collection, max_iterations?, citations?}`.
 */
export const batchRequestSchema = z
  .object({
    collection: id.default('default'),
    questions: z.array(batchQuestionSchema).min(1, 'a batch needs at least one question').max(10_000),
    options: z
      .object({
        /**
         * Runs of this batch in flight at once, so one batch cannot starve other tenants. Up to 10 000 with
         * `providerBatch` (a run waiting on its provider batch holds no worker). @default 8; with
         * `providerBatch`, every question at once (at most 10 000)
         */
        concurrency: z.number().int().min(1).max(MAX_PROVIDER_BATCH_CONCURRENCY).optional(),
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
      .default({ graph: 'rag-agent', priority: BATCH_PRIORITY }),
    /**
     * Make the runs' model calls through the provider's Batch API (`/v1/files` + `/v1/batches`) at batch
     * prices, answered within its completion window. @default false
     */
    providerBatch: z.boolean().default(false),
    /**
     * Answer each question from the tenant's answer cache when it was answered before and its cited documents
     * are unchanged, and store new answers there (each run's `answer_cache`, rag-agent graphs). @default false
     */
    answerCache: z.boolean().default(false),
  })
  .strict()
  .superRefine((batch, context) => {
    const concurrency = batch.options.concurrency;
    if (concurrency !== undefined && concurrency > MAX_CONCURRENCY && !batch.providerBatch)
      context.addIssue({
        code: 'custom',
        path: ['options', 'concurrency'],
        message: `must be at most ${MAX_CONCURRENCY} (up to ${MAX_PROVIDER_BATCH_CONCURRENCY} with providerBatch, whose waiting runs hold no worker)`,
      });
  });
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

/** One provider batch of a batch submitted with `providerBatch`. */
interface ProviderBatchSummary {
  /** agentq's name for it (`<batch id>.f<n>`), known before the provider's. */
  flush: string;
  /** The provider's batch id, once created. */
  id: string | null;
  /** The provider's status (`validating`, `in_progress`, `completed`, `expired`, …), or agentq's step before it exists (`intent`, `uploaded`). */
  status: string;
  requests: number;
  requestCounts: { total: number; completed: number; failed: number } | null;
  createdAt: string;
  finishedAt: string | null;
}

/** The Batch API side of a batch: its provider batches, the model calls parked, and the cost at batch prices beside live prices. */
export interface ProviderBatchProgress {
  batches: ProviderBatchSummary[];
  /** Model calls parked and not yet in a provider batch. */
  pending: number;
  /** Model calls waiting: pending plus those in unfinished provider batches. */
  parked: number;
  usage: { inputTokens: number; outputTokens: number };
  /** At batch prices (AGENTQ_BATCH_PRICES, else half of AGENTQ_PRICES). */
  costUsd: number;
  /** What the same tokens would have cost live (AGENTQ_PRICES). */
  liveCostUsd: number;
}

export interface BatchRecord {
  id: string;
  tenant: string;
  status: BatchStatus;
  graph: string;
  collection: string;
  concurrency: number;
  progress: BatchProgress;
  /** Present when the batch's model calls go through the provider's Batch API. */
  providerBatch?: ProviderBatchProgress;
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
  /** Answered from the answer cache (`answerCache`): the run whose answer it is, and when that was stored. @default absent */
  cached?: { from: string; at: string };
}
