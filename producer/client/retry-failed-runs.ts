import { sleep } from '../../shared/contracts/abort.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { listMatchingRuns, type RunListing } from './list-matching-runs.js';

/** Which failed runs a bulk retry takes (all of them given: AND). */
export interface FailedRunsFilter {
  /** Only runs that failed with this error code, e.g. PROVIDER_ERROR. */
  errorCode?: string;
  /** Only runs created at or after this time (ms since the epoch). */
  since?: number;
  graph?: string;
  /** @default the client's tenant */
  tenant?: string;
}

export interface RetryFailedOptions {
  /** Count and list the matches; retry nothing. @default false */
  dryRun?: boolean;
  /** At most this many retries a second (the runs' first steps hit the provider that just failed). @default 5 */
  ratePerSecond?: number;
  /** At most this many runs. @default 1000 */
  limit?: number;
}

export interface RetryFailedSummary {
  dryRun: boolean;
  /** Failed runs that matched. */
  matched: number;
  /** Their ids (all of them on a dry run). */
  runs: string[];
  /** Runs retried by this call, from their failed step (each keeps `retryOf`, the link to its earlier attempt). */
  retried: string[];
  /** Runs not retried: another retry (a racing command) got there first, or the run moved on. */
  skipped: { runId: string; reason: string }[];
  /** Runs whose retry failed (the admission refused, Redis did not answer). */
  errors: { runId: string; code: string; message: string }[];
}

interface RetryFailedDeps extends RunListing {
  retry(runId: string, options: { failedAt?: number }): Promise<RunRecord>;
}

/**
 * Retries failed runs in bulk (the dead letters of an outage): every run that failed (with
 * `errorCode`, since `since`, of `graph`) is retried from its failed step, at `ratePerSecond`. Each
 * retry names the failure it matched (its `finishedAt`): when two bulk retries race, a run is retried
 * by one of them only — the other finds it running, or failed again later, and skips it.
 */
export async function retryFailedRuns(
  deps: RetryFailedDeps,
  filter: FailedRunsFilter,
  { dryRun = false, ratePerSecond = 5, limit = 1000 }: RetryFailedOptions = {},
): Promise<RetryFailedSummary> {
  if (!(ratePerSecond > 0))
    throw new AgentqError('INVALID_INPUT', `ratePerSecond must be above 0, got ${ratePerSecond}`);
  const matches = await listMatchingRuns(
    deps,
    {
      status: 'failed',
      ...(filter.errorCode ? { errorCode: filter.errorCode } : {}),
      ...(filter.since === undefined ? {} : { since: filter.since }),
      ...(filter.graph ? { graph: filter.graph } : {}),
      ...(filter.tenant ? { tenant: filter.tenant } : {}),
    },
    { limit },
  );
  const summary: RetryFailedSummary = {
    dryRun,
    matched: matches.length,
    runs: matches.map((run) => run.id),
    retried: [],
    skipped: [],
    errors: [],
  };
  if (dryRun) return summary;
  const gapMs = 1000 / ratePerSecond;
  for (const [index, run] of matches.entries()) {
    if (index > 0) await sleep(gapMs);
    const failedAt = run.finishedAt === undefined ? undefined : Date.parse(run.finishedAt);
    try {
      await deps.retry(run.id, failedAt === undefined ? {} : { failedAt });
      summary.retried.push(run.id);
    } catch (error) {
      if (AgentqError.isInstance(error) && (error.code === 'CONFLICT' || error.code === 'NOT_FOUND'))
        summary.skipped.push({ runId: run.id, reason: error.message });
      else
        summary.errors.push({
          runId: run.id,
          code: AgentqError.isInstance(error) ? error.code : 'INTERNAL',
          message: (error as Error).message,
        });
    }
  }
  return summary;
}
