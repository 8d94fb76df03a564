import { z } from 'zod';
import { ERROR_CODES } from '../../../shared/contracts/errors.js';
import { contentPartSchema } from '../../../shared/contracts/content-parts.js';
import type { RunResult } from '../../../shared/contracts/run-result.js';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';
import {
  RUN_STATUSES,
  type ChildRunLink,
  type Message,
  type RunRecord,
  type StepRecord,
} from '../../../shared/contracts/run-record.js';
import { enqueueRequestSchema } from '../../client/agent-client.js';
import { READ_BOUNDS } from '../read-bounds.js';
import { STREAM_CURSOR_PATTERN } from '../../../shared/contracts/stream-cursor.js';

const idMessage = (what: string) => `${what} must be 1-128 characters of letters, digits, '_', '.' or '-'`;

/** `POST /v1/runs`: job schema v1 without `v`; the tenant comes from the API key, never from the body. */
export const createRunBodySchema = enqueueRequestSchema
  .omit({ tenant: true })
  .extend({
    tenant: z.never({ error: 'tenant comes from your API key; remove it from the body' }).optional(),
  })
  .strict()
  .describe('CreateRun');

/** `POST /v1/runs?queueUnserved=true`: queue a run of a graph no live worker serves (it waits, then fails). */
export const createRunQuerySchema = z
  .object({
    queueUnserved: z
      .enum(['true', 'false'], { error: "queueUnserved must be 'true' or 'false'" })
      .default('false')
      .transform((value) => value === 'true')
      .describe(
        'Queue the run even when no live worker serves its graph (it waits up to AGENTQ_UNSERVED_GRAPH_WAIT_MS for one, then fails with UNKNOWN_GRAPH). Without it such a request gets 400 UNKNOWN_GRAPH naming the graphs served.',
      ),
  })
  .strict();

export const runIdParamsSchema = z.object({ id: z.string().regex(ID_PATTERN, idMessage('the run id')) });

export const idempotencyHeadersSchema = z
  .object({
    'idempotency-key': z.string().regex(ID_PATTERN, idMessage('the Idempotency-Key header')).optional(),
  })
  .loose();

export const eventsHeadersSchema = z
  .object({
    'last-event-id': z
      .string()
      .regex(
        STREAM_CURSOR_PATTERN,
        "the Last-Event-ID header must be an event id this stream sent (like '1700000000000-0_1700000000100-7')",
      )
      .optional(),
  })
  .loose();

/** For clients that cannot set headers (a first EventSource connection): the same cursor as a parameter. */
export const eventsQuerySchema = z
  .object({
    lastEventId: z
      .string()
      .regex(
        STREAM_CURSOR_PATTERN,
        "lastEventId must be an event id this stream sent (like '1700000000000-0_1700000000100-7')",
      )
      .optional(),
  })
  .strict();

export const listRunsQuerySchema = z
  .object({
    status: z.enum(RUN_STATUSES).optional(),
    graph: z.string().min(1).max(128).optional(),
    error: z
      .enum(ERROR_CODES)
      .optional()
      .describe('only runs whose error has this code, e.g. PROVIDER_ERROR (with status=failed: the dead letters)'),
    since: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('only runs created since then: a duration back (30m, 1h, 7d) or an ISO 8601 time'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().min(1).max(512).optional(),
  })
  .strict();

export const deleteRunQuerySchema = z
  .object({
    purge: z
      .enum(['true', 'false'], { error: "purge must be 'true' or 'false'" })
      .default('false')
      .transform((value) => value === 'true'),
  })
  .strict();

export const resumeBodySchema = z
  .object({ value: z.unknown() })
  .strict()
  .refine((body) => Object.hasOwn(body, 'value'), {
    message: 'value is required: the answer to the interrupt (null is allowed)',
    path: ['value'],
  });

/** A run's model usage (RunRecord `usage`): the cached-input fields appear once a step recorded them. */
const usageSchema = z
  .object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    costUsd: z.number(),
    cachedInputTokens: z
      .number()
      .optional()
      .describe(
        'the part of inputTokens the provider read from its prompt cache, priced at its cached rate (absent: 0)',
      ),
    uncachedCostUsd: z
      .number()
      .optional()
      .describe(
        'what the same calls would have cost with every input token at the full input rate (absent: no priced call)',
      ),
  })
  .loose();

export const errorRecordSchema = z
  .object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    retryable: z.boolean(),
    details: z.unknown().optional(),
    node: z.string().optional(),
    attempt: z.number().optional(),
  })
  .loose();

// Loose objects: a field added to the record later reaches the caller without touching the API. The
// annotations check the schemas against the records the store returns.
export const runRecordSchema: z.ZodType<RunRecord> = z
  .object({
    id: z.string(),
    tenant: z.string(),
    status: z.enum(RUN_STATUSES),
    graph: z.string(),
    graphVersion: z.string().nullable(),
    stepCount: z.number(),
    output: z.unknown(),
    error: errorRecordSchema.nullable(),
    interrupt: z
      .object({
        node: z.string(),
        stepId: z.string(),
        request: z.unknown(),
        callbackUrl: z
          .string()
          .optional()
          .describe('when the node asked for one: POST the resume body here, without an API key, once'),
        callbackExpiresAt: z.string().optional().describe('ISO 8601: the callback URL’s expiry'),
      })
      .loose()
      .nullable(),
    usage: usageSchema,
    scheduleId: z.string().optional().describe('the schedule whose tick started the run'),
    concurrency: z
      .object({ key: z.string(), limit: z.number() })
      .optional()
      .describe("the concurrency key the run is held to and its limit (its own, or its graph's once taken in)"),
    forkOf: z
      .object({ runId: z.string(), step: z.number(), patched: z.array(z.string()).optional() })
      .optional()
      .describe('a fork: the run and step it was forked from, and the state keys its patch set'),
    replayOf: z
      .object({ runId: z.string(), live: z.boolean() })
      .optional()
      .describe('a replay: the run it replays; live: it goes on with live calls after a divergence'),
    retryOf: z
      .object({ attempts: z.number(), error: errorRecordSchema.nullable(), failedAt: z.number().nullable() })
      .optional()
      .describe('a retried run: attempts before this one, the last one’s error and when it failed (ms)'),
    cached: z
      .object({ from: z.string(), at: z.string() })
      .optional()
      .describe(
        'answered from the answer cache (`answer_cache`): the run whose answer it returned, and when that was stored',
      ),
    parentRunId: z.string().optional().describe('a child run: the run whose step started it (context.runGraph)'),
    parentStep: z.string().optional().describe('a child run: the id of that step (`s<k>.t<i>`)'),
    finishedAt: z.string().optional().describe('when a finished run finished'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .loose()
  .describe('RunRecord');

export const childrenSchema: z.ZodType<{ children: ChildRunLink[]; nextCursor: string | null; total: number }> =
  z.object({
    children: z.array(
      z.object({
        runId: z.string(),
        graph: z.string(),
        step: z.string().describe('the parent step that started it'),
        wait: z.boolean().describe('whether that step waits for it (cancelling the parent cancels it)'),
        createdAt: z.string(),
      }),
    ),
    nextCursor: z.string().nullable().describe('pass it as `cursor` for the next page; null on the last page'),
    total: z.number().describe('how many children the run has'),
  });

export const runListSchema: z.ZodType<{ runs: RunRecord[]; nextCursor: string | null }> = z.object({
  runs: z.array(runRecordSchema),
  nextCursor: z.string().nullable(),
});

/** `?cursor=&limit=` of a run's steps and messages: one window of the list, oldest first. */
export const listWindowQuerySchema = z
  .object({
    cursor: z
      .string()
      .regex(/^\d{1,10}$/, 'cursor must be a nextCursor this API returned')
      .optional()
      .describe('where the page starts: the nextCursor of the page before (none: the first page)'),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(READ_BOUNDS.apiItems)
      .default(READ_BOUNDS.apiItems)
      .describe(`items per page (at most ${READ_BOUNDS.apiItems}; a page also stops after about 4 MiB of items)`),
  })
  .strict();

/** `?cursor=&limit=` of a run's children: the same, with a Redis HSCAN cursor (up to 20 digits); a page holds about `limit`. */
export const childrenQuerySchema = listWindowQuerySchema.extend({
  cursor: z
    .string()
    .regex(/^\d{1,20}$/, 'cursor must be a nextCursor this API returned')
    .optional()
    .describe('where the page starts: the nextCursor of the page before (none: the first page)'),
});

/** What a window of a list says besides its items. */
const windowFields = {
  nextCursor: z.string().nullable().describe('pass it as `cursor` for the next page; null on the last page'),
  total: z.number().describe('how many items the whole list holds'),
};

export const stepsSchema: z.ZodType<{ steps: StepRecord[]; nextCursor: string | null; total: number }> = z.object({
  ...windowFields,
  steps: z.array(
    z
      .object({
        index: z.number(),
        superstep: z.number(),
        task: z.number(),
        node: z.string(),
        attempts: z.number(),
        startedAt: z.string(),
        endedAt: z.string(),
      })
      .loose(),
  ),
});

export const messageSchema = z
  .object({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    // Text, or a user message's content parts (text and image_url, OpenAI's format).
    content: z.union([z.string(), z.array(contentPartSchema)]).nullable(),
  })
  .loose();

export const messagesSchema: z.ZodType<{ messages: Message[]; nextCursor: string | null; total: number }> = z.object({
  messages: z.array(messageSchema),
  ...windowFields,
});

/** `GET /v1/runs/:id/result`: the run's result object (shared/contracts/run-result.ts). */
export const runResultSchema: z.ZodType<RunResult> = z
  .object({
    runId: z.string(),
    status: z.enum(RUN_STATUSES),
    graph: z.string(),
    output: z.unknown(),
    answer: z.string().nullable(),
    finishReason: z
      .string()
      .nullable()
      .describe("why the model's last response ended: stop, length, tool_calls, content_filter, other"),
    toolExecutions: z.array(
      z
        .object({ toolCallId: z.string(), name: z.string(), arguments: z.string(), result: z.string().nullable() })
        .loose(),
    ),
    intermediateResponses: z.array(messageSchema).describe("the model's responses before its final one"),
    sources: z.array(z.unknown()),
    usage: usageSchema,
    error: errorRecordSchema.nullable(),
  })
  .loose()
  .describe('RunResult');
