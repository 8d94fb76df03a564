import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { AgentqError } from '../../contracts/errors.js';
import { formatZodError, runJobSchema, runOptionsSchema, runRequestProblem } from '../../contracts/job-schema.js';

/** Shortest interval of an `everyMs` schedule: below a second a schedule is a loop, not a schedule. */
const MIN_EVERY_MS = 1000;
/** Schedules one tenant may have; past it a create is refused (delete some first). */
export const MAX_SCHEDULES_PER_TENANT = 1000;

const isoTime = (field: string) =>
  z.iso.datetime({ offset: true, error: `${field} must be an ISO 8601 time such as 2026-12-01T09:00:00Z` });

/**
 * What a schedule starts and when. Exactly one of `cron` (5 fields, or 6 with seconds first; `tz` an IANA
 * time zone, default UTC) or `everyMs`. `startAt`/`endAt` bound the ticks. The run fields are those of a
 * run request (job schema v1): graph, graphVersion, input, options, priority, debounce, throttle,
 * concurrency.
 */
export const scheduleSpecSchema = z
  .object({
    name: z.string().min(1).max(200).optional().describe('a label for people; not unique'),
    graph: runJobSchema.shape.graph,
    graphVersion: runJobSchema.shape.graphVersion,
    input: runJobSchema.shape.input,
    options: runOptionsSchema.optional(),
    priority: runJobSchema.shape.priority,
    debounce: runJobSchema.shape.debounce,
    throttle: runJobSchema.shape.throttle,
    concurrency: runJobSchema.shape.concurrency,
    cron: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "a cron expression, e.g. '0 9 * * 1-5' (minute hour day month weekday; a sixth leading field is seconds)",
      ),
    tz: z.string().min(1).max(64).optional().describe("the cron's IANA time zone, e.g. 'Europe/Berlin' (default UTC)"),
    everyMs: z
      .number({ error: `everyMs must be a whole number of milliseconds, at least ${MIN_EVERY_MS}` })
      .int(`everyMs must be a whole number of milliseconds, at least ${MIN_EVERY_MS}`)
      .min(MIN_EVERY_MS, `everyMs must be at least ${MIN_EVERY_MS} (one second)`)
      .max(366 * 24 * 3600 * 1000, 'everyMs must be at most a year')
      .optional(),
    startAt: isoTime('startAt').optional(),
    endAt: isoTime('endAt').optional(),
    paused: z.boolean().optional().describe('create it paused (no ticks until resumed)'),
  })
  .strict()
  .superRefine((spec, context) => {
    if (spec.cron === undefined && spec.everyMs === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['cron'],
        message: "give either cron (e.g. '0 9 * * 1-5') or everyMs (e.g. 60000)",
      });
    }
    const combined = runRequestProblem(spec);
    if (combined) context.addIssue({ code: 'custom', path: ['throttle'], message: combined });
    if (spec.cron !== undefined && spec.everyMs !== undefined) {
      context.addIssue({ code: 'custom', path: ['everyMs'], message: 'give either cron or everyMs, not both' });
    }
    if (spec.tz !== undefined && !isTimeZone(spec.tz)) {
      context.addIssue({
        code: 'custom',
        path: ['tz'],
        message: `'${spec.tz}' is not an IANA time zone (e.g. 'Europe/Berlin', 'America/New_York', 'UTC')`,
      });
    } else if (spec.tz !== undefined && spec.cron === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['tz'],
        message: 'tz applies to a cron schedule only; an everyMs schedule counts from its start',
      });
    }
    if (spec.cron !== undefined) {
      const problem = cronProblem(spec.cron, spec.tz !== undefined && isTimeZone(spec.tz) ? spec.tz : undefined);
      if (problem) context.addIssue({ code: 'custom', path: ['cron'], message: problem });
    }
    if (spec.startAt !== undefined && spec.endAt !== undefined && Date.parse(spec.endAt) <= Date.parse(spec.startAt)) {
      context.addIssue({ code: 'custom', path: ['endAt'], message: 'endAt must be after startAt' });
    }
  });
export type ScheduleSpec = z.output<typeof scheduleSpecSchema>;

/**
 * A change to a schedule: any field of the spec; `null` clears an optional one (name, graphVersion,
 * options, priority, tz, startAt, endAt). Giving `cron` drops `everyMs` and the other way round.
 */
export type SchedulePatch = Partial<{ [K in keyof ScheduleSpec]: ScheduleSpec[K] | null }>;

/** The spec checked; → it parsed, or INVALID_INPUT naming each field and what it accepts. */
export function parseScheduleSpec(input: unknown): ScheduleSpec {
  const parsed = scheduleSpecSchema.safeParse(input);
  if (!parsed.success)
    throw new AgentqError('INVALID_INPUT', `invalid schedule: ${formatZodError(parsed.error)}`, {
      details: parsed.error.issues,
    });
  return parsed.data;
}

/** `current` with `patch` applied (not yet checked: parseScheduleSpec the result). */
export function applySchedulePatch(current: ScheduleSpec, patch: unknown): Record<string, unknown> {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new AgentqError(
      'INVALID_INPUT',
      'a schedule change must be a JSON object of the fields to change, e.g. {"everyMs": 60000} or {"paused": true}',
    );
  }
  const next: Record<string, unknown> = { ...current };
  const changes = patch as Record<string, unknown>;
  if ('cron' in changes && changes.cron !== null) delete next.everyMs;
  if ('everyMs' in changes && changes.everyMs !== null) {
    delete next.cron;
    delete next.tz;
  }
  for (const [field, value] of Object.entries(changes)) {
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return next;
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with a cron expression (BullMQ's own parser decides), or undefined. */
function cronProblem(cron: string, tz: string | undefined): string | undefined {
  const fields = cron.trim().split(/\s+/).length;
  if (fields < 5 || fields > 6)
    return `'${cron}' has ${fields} fields; a cron expression has 5 (minute hour day month weekday) or 6 (seconds first), e.g. '0 9 * * 1-5'`;
  try {
    CronExpressionParser.parse(cron, tz ? { tz } : {}).next();
    return undefined;
  } catch (error) {
    return `'${cron}' is not a valid cron expression (${(error as Error).message}); e.g. '0 9 * * 1-5' is 09:00 on weekdays`;
  }
}
