import type { Worker } from 'bullmq';

/** The field of the stand-in data an oversized job gets instead of its own (see refuseOversizedJobData). */
const OVERSIZED_JOB = 'agentqOversizedJob';

/** What a processor sees of a job whose data was over the limit: its size and a few short top-level strings. */
export interface OversizedJob {
  /** The data's size in bytes (UTF-8). */
  bytes: number;
  /** The limit it was over. */
  limitBytes: number;
  /** The top-level string fields asked for that were found (each at most 128 characters), unparsed. */
  fields: Record<string, string>;
}

/** The oversized-job description in `data`, when `data` is the stand-in refuseOversizedJobData made. */
export function oversizedJobOf(data: unknown): OversizedJob | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as Record<string, unknown>)[OVERSIZED_JOB];
  return typeof value === 'object' && value !== null ? (value as OversizedJob) : undefined;
}

/**
 * BullMQ parses a job's data (`JSON.parse` in Job.fromJSON, called from the
 * Worker's `createJob`) before the processor sees it, on the event loop. A 20 MB raw job blocked the loop
 * past its lock, stalled, and came back again and again. This wraps the worker's `createJob` (BullMQ
 * internals: this seam is the one place allowed to touch them) so that data over `maxBytes` is never
 * parsed: the job gets a small stand-in (`{[OVERSIZED_JOB]: OversizedJob}`) whose `fields` are the named
 * top-level strings found by a linear scan that builds no objects (so the run can be failed under the id
 * its producer gave). The processor decides what to do with it.
 */
export function refuseOversizedJobData<W extends Worker>(worker: W, maxBytes: number, fields: readonly string[]): W {
  const internals = worker as unknown as { createJob(data: { data?: unknown }, jobId?: string): unknown };
  const createJob = internals.createJob.bind(worker);
  const wanted = new Set(fields);
  internals.createJob = (raw, jobId) => {
    const text = raw?.data;
    if (typeof text === 'string' && text.length * 3 > maxBytes) {
      const bytes = Buffer.byteLength(text);
      if (bytes > maxBytes) {
        const stand: OversizedJob = { bytes, limitBytes: maxBytes, fields: topLevelStrings(text, wanted) };
        return createJob({ ...raw, data: JSON.stringify({ [OVERSIZED_JOB]: stand }) }, jobId);
      }
    }
    return createJob(raw, jobId);
  };
  return worker;
}

const MAX_FIELD = 128;

/**
 * The top-level string members named in `names` of a JSON object text, each at most 128 characters and
 * without escapes, found in one pass over the characters: nested values are skipped by depth, no string
 * but those members is ever sliced. A malformed text yields what was found before it went wrong.
 */
export function topLevelStrings(text: string, names: ReadonlySet<string>): Record<string, string> {
  const found: Record<string, string> = {};
  let index = text.indexOf('{');
  if (index < 0) return found;
  index += 1;
  let depth = 1;
  let inKey = true;
  let key: string | undefined;
  while (index < text.length && depth > 0) {
    const code = text.charCodeAt(index);
    if (code === 34) {
      // A string: find its closing quote, stepping over escapes.
      let end = index + 1;
      let escaped = false;
      for (; end < text.length; end += 1) {
        const inner = text.charCodeAt(end);
        if (inner === 92) {
          escaped = true;
          end += 1;
        } else if (inner === 34) break;
      }
      if (depth === 1) {
        const value = end - index - 1 <= MAX_FIELD && !escaped ? text.slice(index + 1, end) : undefined;
        if (inKey) key = value;
        else if (value !== undefined && key !== undefined && names.has(key)) found[key] = value;
      }
      index = end + 1;
      continue;
    }
    if (code === 123 || code === 91) depth += 1;
    else if (code === 125 || code === 93) depth -= 1;
    else if (depth === 1 && code === 58) inKey = false;
    else if (depth === 1 && code === 44) {
      inKey = true;
      key = undefined;
    }
    index += 1;
  }
  return found;
}
