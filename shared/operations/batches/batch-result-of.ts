import { cachedMarkOf, parseMeta } from '../../store/run-meta.js';
import { bucket } from './batch-progress.js';
import type { BatchResult, BatchStatus } from './batch-schema.js';

/** One question's result from its run's meta (HGETALL; empty or absent before the run exists): answers only for completed runs. */
export function batchResultOf({
  item,
  runId,
  batchStatus,
  fields,
}: {
  item: { id: string; question: string };
  runId: string;
  batchStatus: BatchStatus;
  fields: unknown;
}): BatchResult {
  const meta = fields as Record<string, string> | undefined;
  const run = meta?.id ? parseMeta(meta) : null;
  const output = run?.status === 'completed' ? run.output : null;
  const answer = typeof output === 'string' ? output : ((output as { answer?: unknown } | null)?.answer ?? null);
  const sources = (output as { sources?: unknown[] } | null)?.sources ?? [];
  return {
    id: item.id,
    question: item.question,
    runId,
    status: bucket(run?.status ?? null, batchStatus),
    answer: typeof answer === 'string' ? answer : answer === null ? null : JSON.stringify(answer),
    sources: Array.isArray(sources) ? sources : [],
    error: run?.error ? { code: run.error.code, message: run.error.message } : null,
    output,
    ...cachedMarkOf(output),
  };
}
