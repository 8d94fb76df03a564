import { z } from 'zod';
import { ERROR_CODES } from '../../../shared/contracts/errors.js';
import { CANCELLABLE_STATUSES, type CancelRunsSummary } from '../../client/cancel-runs.js';

/** `POST /v1/runs/cancel`: runs cancelled in bulk. */
export const cancelRunsBodySchema = z
  .object({
    status: z
      .union([z.enum(CANCELLABLE_STATUSES), z.array(z.enum(CANCELLABLE_STATUSES)).min(1).max(3)], {
        error: `status must be one or more of ${CANCELLABLE_STATUSES.join(', ')}: the statuses a run can be cancelled in`,
      })
      .describe('required: the statuses to cancel (queued, running, waiting), one or a list'),
    graph: z.string().min(1).max(128).optional(),
    error: z
      .enum(ERROR_CODES)
      .optional()
      .describe('only runs carrying this error code: for runs in flight, the failure they were retried from'),
    concurrencyKey: z.string().min(1).max(128).optional().describe('only runs held to this concurrency key'),
    since: z.string().min(1).max(64).optional().describe('only runs created since then: 30m, 1h, 7d or an ISO time'),
    until: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('only runs created before then: 30m (ago), 1h, 7d or an ISO time'),
    dryRun: z.boolean().optional().describe('count and list the matches; cancel nothing'),
    ratePerSecond: z.number().min(1).max(1000).optional().describe('cancels a second (default 100)'),
    limit: z.number().int().min(1).max(1000).optional().describe('at most this many runs (default 200)'),
  })
  .strict()
  .describe('CancelRuns');

export const cancelRunsSummarySchema: z.ZodType<CancelRunsSummary> = z
  .object({
    dryRun: z.boolean(),
    matched: z.number(),
    runs: z.array(z.string()),
    cancelled: z.array(z.string()),
    cancelling: z.array(z.string()),
    skipped: z.array(z.object({ runId: z.string(), reason: z.string() })),
    errors: z.array(z.object({ runId: z.string(), code: z.string(), message: z.string() })),
  })
  .describe('CancelRunsSummary');
