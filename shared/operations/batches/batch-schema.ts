import { z } from 'zod';
import { ID_PATTERN } from '../../contracts/ids.js';
import { BATCH_PRIORITY, MAX_PRIORITY } from '../../contracts/job-schema.js';
import { BATCH_MODES, parseDeadline, type BatchMode } from './autopilot-plan.js';

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
    /**
     * Finish by then: an ISO 8601 time, or a duration from submission (`45s`, `90m`, `6h`, `2d`). With it
     * (or a budget) the batch is planned: the cheapest allowed mode that meets it. @default none
     */
    deadline: z
      .string()
      .refine((text) => parseDeadline(text, 0) !== undefined, {
        message: "must be an ISO 8601 time (2026-12-01T06:00:00Z) or a duration such as '45s', '90m', '6h', '2d'",
      })
      .optional(),
    /** USD the batch may spend: refused at submission when no mode fits, stopped when it would pass it. @default none */
    budgetUsd: z.number().positive('must be more than 0').optional(),
    /**
     * The modes a plan may use. @default every mode the provider offers; `providerBatch: true` means `['batch']`
     */
    modes: z
      .array(z.enum(BATCH_MODES))
      .min(1, 'name at least one mode')
      .refine((modes) => new Set(modes).size === modes.length, { message: 'a mode is named twice' })
      .optional(),
  })
  .strict()
  .superRefine((batch, context) => {
    if (batch.providerBatch && batch.modes && (batch.modes.length !== 1 || batch.modes[0] !== 'batch'))
      context.addIssue({
        code: 'custom',
        path: ['modes'],
        message: "providerBatch: true means modes ['batch']; leave one of them out",
      });
    const concurrency = batch.options.concurrency;
    if (
      concurrency !== undefined &&
      concurrency > MAX_CONCURRENCY &&
      !batch.providerBatch &&
      !batch.modes?.includes('batch')
    )
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

export interface BatchUsage {
  inputTokens: number;
  /** The part of inputTokens the provider read from its prompt cache. */
  cachedInputTokens: number;
  outputTokens: number;
  /** At the price of the mode each call was answered in. */
  costUsd: number;
  /** The same calls with every input token at the full rate. */
  uncachedCostUsd: number;
  calls: Record<BatchMode, number>;
}

/** A planned batch: what it was asked, the plan it follows, its estimate, and whether its budget stopped it. */
export interface BatchAutopilot {
  /** ISO 8601, or null. */
  deadline: string | null;
  budgetUsd: number | null;
  modes: BatchMode[];
  plan: { mode: BatchMode; reason: string; at: string };
  estimate: { costUsd: number; finishAt: string };
  /** Set once the budget stopped it: what was left undone and unspent. */
  stopped: null | { reason: 'budget'; at: string; left: { questions: number; budgetUsd: number } };
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
  /** Its finished runs' usage, added as each finishes; calls by the mode they were sent in. */
  usage: BatchUsage;
  /** Present when the batch was planned (a deadline or a budget). */
  autopilot?: BatchAutopilot;
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
