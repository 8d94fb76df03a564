import { buildRunResult, type RunResult } from '../contracts/run-result.js';
import type { RedisRunStore } from './redis-run-store.js';
import { toRunRecord, type RunMeta } from './run-meta.js';

/**
 * A run's result object (RunResult): its record, the messages it appended itself — a conversation's turn
 * starts after the `seededMessages` its earlier turns gave it — and its steps, read at once.
 */
export async function readRunResult(store: Pick<RedisRunStore, 'reads'>, meta: RunMeta): Promise<RunResult> {
  const [messages, steps] = await Promise.all([
    store.reads.messages(meta.id, meta.seededMessages),
    store.reads.steps(meta.id),
  ]);
  return buildRunResult(toRunRecord(meta), messages, steps);
}
