import { z } from 'zod';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';
import { BATCH_MODES } from '../../../shared/operations/batches/autopilot-plan.js';
import {
  BATCH_STATUSES,
  batchRequestSchema,
  MAX_PROVIDER_BATCH_CONCURRENCY,
} from '../../../shared/operations/batches/batch-schema.js';

export const createBatchBodySchema = batchRequestSchema.describe('CreateBatch');

export const batchIdParamsSchema = z.object({
  id: z.string().regex(ID_PATTERN, "the batch id must be 1-128 characters of letters, digits, '_', '.' or '-'"),
});

export const getBatchQuerySchema = z
  .object({
    /** `json` (the record, with results once finished), `jsonl` or `csv` (the results so far). */
    format: z.enum(['json', 'jsonl', 'csv']).default('json'),
  })
  .strict();

/** JSONL uploads take the collection and options from the query string. */
export const jsonlUploadQuerySchema = z
  .object({
    collection: z.string().regex(ID_PATTERN).optional(),
    concurrency: z.coerce.number().int().min(1).max(MAX_PROVIDER_BATCH_CONCURRENCY).optional(),
    max_iterations: z.coerce.number().int().min(1).max(10).optional(),
    citations: z.enum(['true', 'false']).optional(),
    graph: z.string().min(1).max(128).optional(),
    /** `true`: the model calls go through the provider's Batch API. */
    providerBatch: z.enum(['true', 'false']).optional(),
    /** `true`: questions answered before come from the answer cache. */
    answerCache: z.enum(['true', 'false']).optional(),
    /** The batch's deadline: an ISO 8601 time or a duration (`6h`). */
    deadline: z.string().optional(),
    budgetUsd: z.coerce.number().positive().optional(),
    /** Comma-separated modes a plan may use: `live,flex,batch`. */
    modes: z.string().optional(),
  })
  .loose();

const progressSchema = z.object({
  total: z.number().int(),
  queued: z.number().int(),
  running: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
});

const batchResultSchema = z.object({
  id: z.string(),
  question: z.string(),
  runId: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']),
  answer: z.string().nullable(),
  sources: z.array(z.unknown()),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  output: z.unknown(),
  /** Answered from the answer cache (`answerCache`): the run whose answer it is, and when that was stored. */
  cached: z.object({ from: z.string(), at: z.string() }).optional(),
});

const providerBatchSchema = z
  .object({
    batches: z.array(
      z.object({
        flush: z.string(),
        id: z.string().nullable(),
        status: z.string(),
        requests: z.number().int(),
        requestCounts: z
          .object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() })
          .nullable(),
        createdAt: z.string(),
        finishedAt: z.string().nullable(),
      }),
    ),
    pending: z.number().int(),
    parked: z.number().int(),
    usage: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() }),
    costUsd: z.number(),
    liveCostUsd: z.number(),
  })
  .describe('ProviderBatchProgress');

const modeSchema = z.enum(BATCH_MODES);

const batchUsageSchema = z
  .object({
    inputTokens: z.number().int(),
    cachedInputTokens: z.number().int(),
    outputTokens: z.number().int(),
    costUsd: z.number(),
    uncachedCostUsd: z.number(),
    calls: z.object({ live: z.number().int(), flex: z.number().int(), batch: z.number().int() }),
  })
  .describe('BatchUsage');

const batchAutopilotSchema = z
  .object({
    deadline: z.string().nullable(),
    budgetUsd: z.number().nullable(),
    modes: z.array(modeSchema),
    plan: z.object({ mode: modeSchema, reason: z.string(), at: z.string() }),
    estimate: z.object({ costUsd: z.number(), finishAt: z.string() }),
    stopped: z
      .object({
        reason: z.literal('budget'),
        at: z.string(),
        left: z.object({ questions: z.number().int(), budgetUsd: z.number() }),
      })
      .nullable(),
  })
  .describe('BatchAutopilot');

export const batchRecordSchema = z
  .object({
    id: z.string(),
    tenant: z.string(),
    status: z.enum(BATCH_STATUSES),
    graph: z.string(),
    collection: z.string(),
    concurrency: z.number().int(),
    progress: progressSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().nullable(),
    /** Present when its model calls go through the provider's Batch API: its provider batches, calls parked, cost at batch and live prices. */
    providerBatch: providerBatchSchema.optional(),
    /** Its finished runs' tokens and cost (at the price of the mode each call was answered in), and its calls by mode. */
    usage: batchUsageSchema,
    /** Present when the batch has a deadline or a budget: its plan, estimate and whether its budget stopped it. */
    autopilot: batchAutopilotSchema.optional(),
    /** Present once the batch finished (completed or cancelled). */
    results: z.array(batchResultSchema).optional(),
  })
  .describe('Batch');
