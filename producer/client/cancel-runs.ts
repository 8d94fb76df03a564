import { sleep } from '../../shared/contracts/abort.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { listMatchingRuns, type RunListing } from './list-matching-runs.js';

/** The statuses a bulk cancel takes: a run not finished and not already cancelling. */
export const CANCELLABLE_STATUSES = ['queued', 'running', 'waiting'] as const;
export type CancellableStatus = (typeof CANCELLABLE_STATUSES)[number];

/** Which runs a bulk cancel takes (all of them given: AND). */
export interface CancelRunsFilter {
  /** One or more of queued, running (parked steps included), waiting (an interrupt, a child run). */
  status: CancellableStatus | CancellableStatus[];
  graph?: string;
  /**
   * Only runs carrying this error code. A run in flight has no error of its own: this is the error of the
   * failure it was retried from (`retryOf`, e.g. the runs a bulk retry restarted into an outage).
   */
  errorCode?: string;
  /** Only runs held to this concurrency key (their own `concurrency.key`, or their graph's once taken in). */
  concurrencyKey?: string;
  /** Only runs created at or after this time (ms since the epoch). */
  since?: number;
  /** Only runs created before this time (ms since the epoch). */
  until?: number;
  /** @default the client's tenant */
  tenant?: string;
}

export interface CancelRunsOptions {
  /** Count and list the matches; cancel nothing. @default false */
  dryRun?: boolean;
  /** At most this many cancels a second, so thousands do not crowd out the workers' Redis and queues. @default 100 */
  ratePerSecond?: number;
  /** At most this many runs. @default 1000 */
  limit?: number;
  /** Told after each run (awaited): a progress bar's feed. */
  onProgress?: (progress: { runId: string; outcome: CancelOutcome; done: number; total: number }) => unknown;
}

type CancelOutcome = 'cancelled' | 'cancelling' | 'skipped' | 'error';

export interface CancelRunsSummary {
  dryRun: boolean;
  /** Runs that matched. */
  matched: number;
  /** Their ids, oldest first: the order they are cancelled in (all of them on a dry run). */
  runs: string[];
  /** Runs this call cancelled: they end `cancelled` now. */
  cancelled: string[];
  /** Running runs this call cancelled: a step was in flight, aborted now; they end `cancelled` at its boundary. */
  cancelling: string[];
  /** Runs this call did not change: they finished meanwhile, another cancel got there first, or they are gone. */
  skipped: { runId: string; reason: string }[];
  /** Runs whose cancel failed (Redis did not answer). */
  errors: { runId: string; code: string; message: string }[];
}

interface CancelRunsDeps extends RunListing {
  /** The single-run cancel: the record after it and whether this request changed the run. */
  cancel(runId: string): Promise<{ record: RunRecord; changed: boolean }>;
}

/**
 * Cancels the runs a filter matches, one by one through the single-run cancel at `ratePerSecond`:
 * a run that finished since it was listed is skipped (the cancel changes no finished run), and when two
 * bulk cancels race each run is counted cancelled by one of them only.
 */
export async function cancelRuns(
  deps: CancelRunsDeps,
  filter: CancelRunsFilter,
  { dryRun = false, ratePerSecond = 100, limit = 1000, onProgress }: CancelRunsOptions,
): Promise<CancelRunsSummary> {
  if (!(ratePerSecond > 0))
    throw new AgentqError('INVALID_INPUT', `ratePerSecond must be above 0, got ${ratePerSecond}`);
  const statuses = new Set<string>(Array.isArray(filter.status) ? filter.status : [filter.status]);
  const wrong = [...statuses].filter((status) => !(CANCELLABLE_STATUSES as readonly string[]).includes(status));
  if (statuses.size === 0 || wrong.length > 0)
    throw new AgentqError(
      'INVALID_INPUT',
      `a bulk cancel takes the statuses ${CANCELLABLE_STATUSES.join(', ')}${wrong.length > 0 ? `, not ${wrong.join(', ')}` : '; name at least one'}`,
    );
  const newestFirst = await listMatchingRuns(
    deps,
    {
      // One status is filtered as the runs are read; several, here.
      ...(statuses.size === 1 ? { status: [...statuses][0] as CancellableStatus } : {}),
      ...(filter.graph ? { graph: filter.graph } : {}),
      ...(filter.since === undefined ? {} : { since: filter.since }),
      ...(filter.until === undefined ? {} : { until: filter.until }),
      ...(filter.tenant ? { tenant: filter.tenant } : {}),
    },
    {
      limit,
      keep: (run) =>
        statuses.has(run.status) &&
        (!filter.errorCode || (run.error ?? run.retryOf?.error)?.code === filter.errorCode) &&
        (!filter.concurrencyKey || run.concurrency?.key === filter.concurrencyKey),
    },
  );
  // Oldest first: a parent before the child runs it started (newer), whose ends would wake it needlessly;
  // its own end cancels the children it waits for.
  const matches = newestFirst.reverse();
  const summary: CancelRunsSummary = {
    dryRun,
    matched: matches.length,
    runs: matches.map((run) => run.id),
    cancelled: [],
    cancelling: [],
    skipped: [],
    errors: [],
  };
  if (dryRun) return summary;
  const started = Date.now();
  for (const [index, run] of matches.entries()) {
    // Paced from the start rather than by a gap after each: the rate holds however long a cancel takes.
    const due = started + (index * 1000) / ratePerSecond - Date.now();
    if (due > 0) await sleep(due);
    const outcome = await cancelOne(deps, run.id, summary);
    await onProgress?.({ runId: run.id, outcome, done: index + 1, total: matches.length });
  }
  return summary;
}

async function cancelOne(deps: CancelRunsDeps, runId: string, summary: CancelRunsSummary): Promise<CancelOutcome> {
  try {
    const { record, changed } = await deps.cancel(runId);
    if (!changed) {
      summary.skipped.push({
        runId,
        reason: record.status === 'cancelling' ? 'already cancelling' : `already ${record.status}`,
      });
      return 'skipped';
    }
    // Cancelling now, it may have ended since (its step's boundary): it is one of this call's either way.
    const outcome = record.status === 'cancelled' ? 'cancelled' : 'cancelling';
    summary[outcome].push(runId);
    return outcome;
  } catch (error) {
    if (AgentqError.isInstance(error) && error.code === 'NOT_FOUND') {
      summary.skipped.push({ runId, reason: 'gone (purged or expired)' });
      return 'skipped';
    }
    summary.errors.push({
      runId,
      code: AgentqError.isInstance(error) ? error.code : 'INTERNAL',
      message: (error as Error).message,
    });
    return 'error';
  }
}
