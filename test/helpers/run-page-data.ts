import type { RunPageData } from '../../producer/api/inspector/run-page.js';
import { parseMeta, toRunRecord } from '../../shared/store/run-meta.js';

/** A finished run's page data with no steps, events or history: the page-HTML tests add what they look at. */
export function runPageData(fields: Record<string, string> = {}): RunPageData {
  const meta = parseMeta({
    id: 'run_1',
    tenant: 'acme',
    status: 'completed',
    graph: 'chain',
    maxSteps: '10',
    createdAt: '1700000000000',
    updatedAt: '1700000001000',
    ...fields,
  });
  return {
    record: toRunRecord(meta),
    meta,
    steps: { items: [], from: 0, total: 0, next: null },
    events: [],
    messages: { items: [], from: 0, total: 0, next: null },
    state: {},
    otherPaths: [],
    now: 1700000002000,
  };
}
