import { describe, expect, it } from 'vitest';
import { cancelRuns } from '../../producer/client/cancel-runs.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import type { ListFilter } from '../../shared/store/redis-run-store.js';

const run = (id: string, fields: Partial<RunRecord>) => ({ id, status: 'queued', ...fields }) as RunRecord;

/** The listing and single cancel a bulk cancel stands on, recorded. */
function fakeDeps(runs: RunRecord[]) {
  const listed: (ListFilter & { tenant?: string })[] = [];
  const cancelled: string[] = [];
  return {
    listed,
    cancelled,
    deps: {
      list: async (filter: ListFilter & { tenant?: string }) => {
        listed.push(filter);
        return { runs: runs.filter((each) => !filter.status || each.status === filter.status), nextCursor: null };
      },
      cancel: async (runId: string) => {
        cancelled.push(runId);
        const record = runs.find((each) => each.id === runId)!;
        const changed = record.status !== 'completed';
        return { record: { ...record, status: changed ? 'cancelled' : record.status } as RunRecord, changed };
      },
    },
  };
}

describe('bulk cancel', () => {
  it('takes only statuses a run can be cancelled in, at least one', async () => {
    const { deps } = fakeDeps([]);
    for (const status of [[], 'completed', ['queued', 'failed']])
      await expect(cancelRuns(deps, { status: status as never }, {})).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(cancelRuns(deps, { status: 'queued' }, { ratePerSecond: 0 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });

  it('filters several statuses itself, one in the listing; `errorCode` matches a run in flight by the failure it was retried from', async () => {
    const provider = { code: 'PROVIDER_ERROR' as const, message: 'down', retryable: true };
    const runs = [
      run('newest', { status: 'running', retryOf: { attempts: 1, error: provider, failedAt: 1 } }),
      run('middle', { status: 'waiting' }),
      run('done', { status: 'completed' }),
      run('oldest', { status: 'queued', retryOf: { attempts: 1, error: provider, failedAt: 1 } }),
    ];
    const { deps, listed, cancelled } = fakeDeps(runs);
    const all = await cancelRuns(deps, { status: ['queued', 'running', 'waiting'], until: 5 }, { dryRun: true });
    expect(listed[0]).toMatchObject({ until: 5 });
    expect(listed[0]!.status).toBeUndefined();
    expect(all).toMatchObject({ matched: 3, runs: ['oldest', 'middle', 'newest'] });
    expect(cancelled).toEqual([]);

    const byError = await cancelRuns(deps, { status: ['queued', 'running'], errorCode: 'PROVIDER_ERROR' }, {});
    expect(byError).toMatchObject({ matched: 2, cancelled: ['oldest', 'newest'], skipped: [], errors: [] });
    await cancelRuns(deps, { status: 'waiting' }, { dryRun: true });
    expect(listed.at(-1)).toMatchObject({ status: 'waiting' });
  });

  it('stops at `limit`, keeping the oldest of the newest it listed, and tells each outcome to onProgress', async () => {
    const runs = Array.from({ length: 5 }, (_, i) => run(`r${4 - i}`, {}));
    const { deps } = fakeDeps(runs);
    const told: string[] = [];
    const summary = await cancelRuns(
      deps,
      { status: 'queued' },
      { limit: 3, onProgress: ({ runId, outcome, done, total }) => told.push(`${runId} ${outcome} ${done}/${total}`) },
    );
    expect(summary.runs).toEqual(['r2', 'r3', 'r4']);
    expect(told).toEqual(['r2 cancelled 1/3', 'r3 cancelled 2/3', 'r4 cancelled 3/3']);
  });
});
