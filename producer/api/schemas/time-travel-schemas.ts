import { z } from 'zod';
import { ERROR_CODES } from '../../../shared/contracts/errors.js';
import { RUN_STATUSES } from '../../../shared/contracts/run-record.js';
import { errorRecordSchema } from './run-schemas.js';
import type { ReplayReport, RetryFailedSummary } from '../../client/agent-client.js';

/** `POST /v1/runs/:id/fork`. */
export const forkBodySchema = z
  .object({
    from: z.number().int().min(0).describe('the step to fork from: its index in the run’s step log (GET …/steps)'),
    set: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('state keys to replace in the fork; each must be a key of the graph’s state, with a value of its kind'),
    graphVersion: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('run the fork on this graph version (default: the original’s)'),
  })
  .strict()
  .describe('ForkRun');

/** `POST /v1/runs/:id/replay`. */
export const replayBodySchema = z
  .object({
    graphVersion: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('replay against this graph version (default: the run’s)'),
    continueLive: z
      .boolean()
      .optional()
      .describe('after the first divergence go on with live (paid) calls instead of failing with REPLAY_DIVERGED'),
  })
  .strict()
  .describe('ReplayRun');

/** `?queueUnserved=true` of fork and replay. */
export const queueUnservedQuerySchema = z
  .object({
    queueUnserved: z
      .enum(['true', 'false'], { error: "queueUnserved must be 'true' or 'false'" })
      .default('false')
      .transform((value) => value === 'true'),
  })
  .strict();

const differenceSchema = z
  .object({ path: z.string(), recorded: z.unknown().optional(), replayed: z.unknown().optional() })
  .loose();

export const replayReportSchema: z.ZodType<ReplayReport> = z
  .object({
    runId: z.string(),
    replayOf: z.string(),
    status: z.enum(RUN_STATUSES),
    outcome: z.enum(['same', 'diverged', 'failed', 'pending']),
    diverged: z.boolean(),
    step: z.number().optional(),
    node: z.string().optional(),
    reason: z.string().optional(),
    diff: z.array(differenceSchema).optional(),
    continuedLive: z.boolean().optional(),
    error: errorRecordSchema.optional(),
  })
  .loose()
  .describe('ReplayReport');

/** `POST /v1/runs/retry`: failed runs retried in bulk. */
export const retryFailedBodySchema = z
  .object({
    status: z.literal('failed', { error: "status must be 'failed': only failed runs can be retried" }),
    error: z.enum(ERROR_CODES).optional().describe('only runs that failed with this code, e.g. PROVIDER_ERROR'),
    since: z.string().min(1).max(64).optional().describe('only runs created since then: 30m, 1h, 7d or an ISO time'),
    graph: z.string().min(1).max(128).optional(),
    dryRun: z.boolean().optional().describe('count and list the matches; retry nothing'),
    ratePerSecond: z.number().min(1).max(100).optional().describe('retries a second (default 20)'),
    limit: z.number().int().min(1).max(1000).optional().describe('at most this many runs (default 200)'),
  })
  .strict()
  .describe('RetryFailedRuns');

export const retryFailedSummarySchema: z.ZodType<RetryFailedSummary> = z
  .object({
    dryRun: z.boolean(),
    matched: z.number(),
    runs: z.array(z.string()),
    retried: z.array(z.string()),
    skipped: z.array(z.object({ runId: z.string(), reason: z.string() })),
    errors: z.array(z.object({ runId: z.string(), code: z.string(), message: z.string() })),
  })
  .describe('RetryFailedSummary');
