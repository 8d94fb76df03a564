import { describe, expect, it } from 'vitest';
import { retryFailedRuns } from '../../producer/client/retry-failed-runs.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';

const failedRun = (id: string) => ({ id, status: 'failed', finishedAt: new Date(0).toISOString() }) as RunRecord;

describe('bulk retry when a listing page fails', () => {
  it('lists a page again after a Redis fault, so no failed run is left out', async () => {
    const runs = Array.from({ length: 5 }, (_, i) => failedRun(`r${i}`));
    let faults = 2;
    const deps = {
      list: async () => {
        if (faults > 0) {
          faults -= 1;
          throw new AgentqError('REDIS_UNAVAILABLE', 'Redis did not answer', { retryable: true });
        }
        return { runs, nextCursor: null };
      },
      retry: async (runId: string) => ({ ...failedRun(runId), status: 'queued' }) as RunRecord,
      listRetryDelayMs: 1,
    };
    const summary = await retryFailedRuns(deps, {}, { dryRun: true });
    expect(faults).toBe(0);
    expect(summary.matched).toBe(5);
  });

  it('reports a listing that keeps failing rather than retrying part of the runs', async () => {
    const deps = {
      list: () => Promise.reject(new AgentqError('REDIS_UNAVAILABLE', 'Redis did not answer', { retryable: true })),
      retry: () => Promise.reject(new Error('no run should be retried')),
      listRetryDelayMs: 1,
    };
    await expect(retryFailedRuns(deps, {})).rejects.toMatchObject({
      code: 'REDIS_UNAVAILABLE',
    });
  });
});
