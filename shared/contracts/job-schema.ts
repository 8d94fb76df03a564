import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import { ID_PATTERN, isDerivedRunId, reservedRunIdMessage } from './ids.js';
import { MAX_PRIORITY } from './max-priority.js';

const id = (what: string) =>
  z.string().regex(ID_PATTERN, `${what} must be 1-128 characters of letters, digits, '_', '.' or '-'`);

/**
 * Deepest nesting a run's input may have. Deeper JSON cannot be stored (JSON.stringify recurses and
 * overflows the stack, a retryable-looking crash on every attempt) and no graph input needs it.
 */
export const MAX_INPUT_DEPTH = 100;

/** The longest a debounce or throttle may hold a run back (30 days, as a run's deadline). */
const MAX_FLOW_DELAY_MS = 30 * 24 * 3600 * 1000;

/** True when `value` nests at most `max` arrays/objects deep; iterative, so any depth can be checked. */
export function nestsWithin(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > max) return false;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return true;
}

/** Per-run guards; both optional, defaults from the config. */
export const runOptionsSchema = z
  .object({
    maxSteps: z.number().int().min(1).max(100_000).optional(),
    deadlineMs: z
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 3600 * 1000)
      .optional(),
    /** Input + output tokens the run may spend; the step that would exceed it fails the run (BUDGET_EXCEEDED). */
    tokenBudget: z.number().int().min(1).optional(),
  })
  .strict();
export type RunOptions = z.infer<typeof runOptionsSchema>;

/** What a conversation's new turn does while its previous turn is still queued or running (`onBusy`). */
export const ON_BUSY_MODES = ['queue', 'cancel', 'reject', 'interrupt', 'rollback'] as const;
export type OnBusy = (typeof ON_BUSY_MODES)[number];

/** A run request's options that no field check alone catches (how they combine); → the problem, or undefined. */
export function runRequestProblem(request: {
  conversationId?: string;
  onBusy?: OnBusy;
  debounce?: unknown;
  throttle?: unknown;
}): string | undefined {
  if (request.onBusy !== undefined && request.conversationId === undefined)
    return "onBusy: applies to a conversation's turns; send conversationId with it (or leave onBusy out)";
  // A debounced run's start moves later as requests join it, which would break a throttle's count.
  if (request.debounce !== undefined && request.throttle !== undefined)
    return 'debounce and throttle: send one of them per run (a debounced run already starts at most once per window)';
  return undefined;
}

/**
 * Keeps one pending run per key: a request while one waits to start joins it (`trailing`: its input
 * replaces the pending run's and the start moves to `delayMs` later, at most `maxDelayMs` after the
 * first) or is dropped (`leading`: the first started at once; later ones within `delayMs` of the last
 * return it). The key is the tenant's.
 */
export const debounceSchema = z
  .object({
    key: id('debounce.key'),
    delayMs: z.number().int().min(1).max(MAX_FLOW_DELAY_MS),
    maxDelayMs: z.number().int().min(1).max(MAX_FLOW_DELAY_MS).optional(),
    mode: z.enum(['trailing', 'leading'], { error: 'debounce.mode must be "trailing" or "leading"' }).optional(),
  })
  .strict()
  .refine((debounce) => debounce.maxDelayMs === undefined || debounce.maxDelayMs >= debounce.delayMs, {
    error: 'debounce.maxDelayMs must be at least debounce.delayMs',
  });
export type Debounce = z.infer<typeof debounceSchema>;

/** At most `limit` runs of the key start in any `periodMs`; the others wait (a delayed start, no worker held). */
export const throttleSchema = z
  .object({
    key: id('throttle.key'),
    limit: z.number().int().min(1).max(100_000),
    periodMs: z.number().int().min(1).max(MAX_FLOW_DELAY_MS),
  })
  .strict();
export type Throttle = z.infer<typeof throttleSchema>;

/**
 * At most `limit` runs with this key (the tenant's) are taken in at once; the others wait in order, with
 * no worker held, and start as those finish. On top of the tenant's in-flight cap; runs of several graphs
 * may share a key. The latest run's `limit` is the one its key is held to.
 */
export const concurrencySchema = z
  .object({
    key: id('concurrency.key'),
    limit: z
      .number({ error: 'concurrency.limit must be a whole number from 1 to 10000' })
      .int('concurrency.limit must be a whole number from 1 to 10000')
      .min(1, 'concurrency.limit must be a whole number from 1 to 10000')
      .max(10_000, 'concurrency.limit must be a whole number from 1 to 10000'),
  })
  .strict();
export type Concurrency = z.infer<typeof concurrencySchema>;

/** BullMQ's largest job priority (2^21). */
export { MAX_PRIORITY };
/** The priority of a batch's questions unless the batch sets one: behind every run without a priority. */
export const BATCH_PRIORITY = 100;

/**
 * Job schema v1 (docs/reference/job-schema-v1.md): what another service adds to the intake queue `agentq-runs` with
 * plain BullMQ. The worker validates it; an invalid job fails its run at the first attempt.
 */
export const runJobSchema = z
  .object({
    v: z.literal(1, { error: 'v must be 1 (the only job schema version)' }),
    graph: z.string().min(1).max(128),
    graphVersion: z.string().min(1).max(64).optional(),
    input: z
      .unknown()
      .refine((input) => nestsWithin(input, MAX_INPUT_DEPTH), `input must nest at most ${MAX_INPUT_DEPTH} levels deep`),
    // A client's id never enters agentq's namespace (ids.ts): derived ids come in beside the request.
    runId: id('runId')
      .refine((runId) => !isDerivedRunId(runId), { error: (issue) => reservedRunIdMessage(String(issue.input)) })
      .optional(),
    idempotencyKey: id('idempotencyKey').optional(),
    tenant: id('tenant').optional(),
    options: runOptionsSchema.optional(),
    /**
     * Continues a conversation: the run's history starts from the conversation's latest completed run
     * (same tenant), whichever worker ran it. Same id rules as runId; a new id starts a conversation.
     */
    conversationId: id('conversationId').optional(),
    /**
     * What happens when the conversation's previous turn is still queued or running: `queue`
     * waits behind it, `cancel` cancels it (and any turn waiting before this one) and then starts,
     * `reject` fails this run with CONVERSATION_BUSY, `interrupt` stops it at its next step boundary and
     * continues from what it committed, `rollback` cancels it and drops it from the conversation as if it
     * never ran. Needs `conversationId`. @default the graph's, else 'queue'
     */
    onBusy: z
      .enum(ON_BUSY_MODES, { error: `onBusy must be one of ${ON_BUSY_MODES.map((mode) => `"${mode}"`).join(', ')}` })
      .optional(),
    /**
     * BullMQ's job priority for the run's step jobs: 1 is the most urgent, larger numbers wait longer.
     * Runs without one are served before any run with one (BullMQ takes its wait list first); batch
     * questions default to BATCH_PRIORITY, so interactive runs go ahead of a batch.
     */
    priority: z
      .number({ error: `priority must be a whole number from 1 (most urgent) to ${MAX_PRIORITY}` })
      .int(`priority must be a whole number from 1 (most urgent) to ${MAX_PRIORITY}`)
      .min(1, `priority must be a whole number from 1 (most urgent) to ${MAX_PRIORITY}`)
      .max(MAX_PRIORITY, `priority must be a whole number from 1 (most urgent) to ${MAX_PRIORITY}`)
      .optional(),
    debounce: debounceSchema.optional(),
    throttle: throttleSchema.optional(),
    concurrency: concurrencySchema.optional(),
    /** Receives the run record, signed, when the run finishes (completed, failed or cancelled). */
    webhookUrl: z
      .url({ protocol: /^https?$/, error: 'webhookUrl must be an absolute http:// or https:// URL' })
      .max(2048, 'webhookUrl must be at most 2048 characters')
      .optional(),
  })
  .strict();
export type RunJob = z.infer<typeof runJobSchema>;

/**
 * The intake job a client adds after it has written the run record itself: ids only, so prompts never
 * sit in job data (the input is in the run store).
 */
export const storedRunJobSchema = z.object({ v: z.literal(1), stored: z.literal(true), runId: id('runId') }).strict();
export type StoredRunJob = z.infer<typeof storedRunJobSchema>;

/**
 * The node name of a run's first step job when a producer added it (docs/concepts/step-engine.md). A producer does not
 * know the graph, so the worker that takes this job takes the run in first (validates the input, writes
 * the initial state, adds the other entry tasks' jobs) and then runs the entry task in the same job: one
 * job less per run than an intake hop.
 */
export const START_NODE = '__start__';

/** What a step job carries: ids, never user content. */
export interface StepJobData {
  runId: string;
  superstep: number;
  task: number;
  node: string;
  /** `name@version` the run is pinned to. */
  graph: string;
}

/** Deterministic step-job id: one per task of a superstep. No `:` (BullMQ forbids it). */
export function stepJobId(runId: string, superstep: number, task: number): string {
  return `${runId}.s${superstep}.t${task}`;
}

/** `name@version`, the graph a run is pinned to, as step jobs carry it (the name alone before it is taken in). */
export function graphIdOf(run: { graph: string; graphVersion: string | null }): string {
  return run.graphVersion ? `${run.graph}@${run.graphVersion}` : run.graph;
}

/**
 * BullMQ options of a step job: its deterministic id, its attempts, agentq's backoff. Retention is the
 * step worker's (AGENTQ_KEEP_COMPLETED_JOBS / _FAILED_JOBS, start-worker.ts), not each job's: BullMQ
 * packs, stores and parses back a job's options at every add and fetch, and the worker's apply alike.
 */
export function stepJobOptions(jobId: string, attempts: number, priority = 0): JobsOptions {
  return { jobId, attempts, backoff: { type: 'agentq' }, ...(priority > 0 ? { priority } : {}) };
}

/** A zod error as one readable line: `input.steps: expected number, received string`. */
export function formatZodError(error: z.ZodError, root = ''): string {
  return error.issues
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter(Boolean).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
