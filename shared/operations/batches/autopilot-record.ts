import type { ErrorRecord } from '../../contracts/errors.js';
import type { AutopilotMeta, BatchMeta } from './batch-meta.js';
import type { BatchAutopilot } from './batch-schema.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A planned batch's autopilot as the API shows it (times in ISO 8601). */
export function autopilotRecordOf(autopilot: AutopilotMeta, stopped: BatchMeta['stopped']): BatchAutopilot {
  return {
    deadline: autopilot.deadline === null ? null : iso(autopilot.deadline),
    budgetUsd: autopilot.budgetUsd,
    modes: autopilot.modes,
    plan: { ...autopilot.plan, at: iso(autopilot.plan.at) },
    estimate: { costUsd: autopilot.estimate.costUsd, finishAt: iso(autopilot.estimate.finishAt) },
    stopped: stopped ? { ...stopped, at: iso(stopped.at) } : null,
  };
}

/** The error of a question its batch's budget stopped before it was asked. */
export function budgetStopError(meta: Pick<BatchMeta, 'id' | 'autopilot' | 'stopped'>): ErrorRecord {
  const budgetUsd = meta.autopilot?.budgetUsd;
  return {
    code: 'BUDGET_EXCEEDED',
    message: `batch ${meta.id} stopped at its budget of $${budgetUsd}: this question was not asked`,
    retryable: false,
    details: { budgetUsd, stopped: meta.stopped },
  };
}
