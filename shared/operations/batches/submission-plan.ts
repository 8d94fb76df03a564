import { AgentqError } from '../../contracts/errors.js';
import { parseDeadline, type BatchMode } from './autopilot-plan.js';
import type { AutopilotMeta } from './batch-meta.js';
import type { BatchAutopilotPlanner } from './batch-autopilot.js';
import { checkProviderBatches, type ProviderBatchesCheck } from './check-provider-batches.js';
import { DEFAULT_CONCURRENCY, MAX_PROVIDER_BATCH_CONCURRENCY, type ParsedBatchRequest } from './batch-schema.js';

/** How a new batch's model calls go: the meta fields its submission writes. */
export interface SubmissionPlan {
  /** The mode of a planned batch or of a batch limited to flex; null: as before plans (live, or `providerBatch`). */
  mode: BatchMode | null;
  /** Its calls may go through the provider's Batch API (its collector and progress are on). */
  providerBatch: boolean;
  concurrency: number;
  autopilot: AutopilotMeta | null;
}

/**
 * The mode a batch starts in. Without a deadline and a budget it runs as before: live, or its one allowed
 * mode (`modes: ['flex']` is all flex, `['batch']` or `providerBatch` the Batch API). With either, the
 * planner picks the cheapest allowed mode that meets them, or refuses (BUDGET_EXCEEDED) before anything is
 * created. A provider without a Batch API leaves `batch` out of the default modes; named, it is refused
 * (or run live with AGENTQ_PROVIDER_BATCH_FALLBACK=live) as `providerBatch` is.
 */
export async function planSubmission(
  batch: ParsedBatchRequest,
  context: {
    tenant: string;
    questions: number;
    now: number;
    planner?: BatchAutopilotPlanner;
    providerBatches?: ProviderBatchesCheck;
  },
): Promise<SubmissionPlan> {
  const { questions, now, planner } = context;
  const asked = batch.options.concurrency;
  const deadline = batch.deadline === undefined ? null : parseDeadline(batch.deadline, now)!;
  const budgetUsd = batch.budgetUsd ?? null;
  const planned = deadline !== null || budgetUsd !== null;
  let modes: BatchMode[] | undefined = batch.modes ?? (batch.providerBatch ? ['batch'] : undefined);
  if (modes?.includes('batch') && !(await checkProviderBatches(context.providerBatches)))
    modes = modes.filter((mode) => mode !== 'batch');
  if (modes?.length === 0) modes = ['live'];
  if (!planned) {
    const only = !modes || modes.includes('live') ? 'live' : modes[0]!;
    const providerBatch = only === 'batch';
    return {
      // A batch that was live or `providerBatch` before plans keeps its meta as it was.
      mode: only === 'flex' ? 'flex' : null,
      providerBatch,
      concurrency: concurrencyFor(providerBatch ? 'batch' : 'live', asked, questions),
      autopilot: null,
    };
  }
  if (!planner)
    throw new AgentqError(
      'INVALID_INPUT',
      'invalid batch: deadline and budgetUsd need a producer that can plan (one with the model settings); submit through the API or a client made with loadConfig()',
    );
  modes ??= [
    'live',
    ...(planner.settings.flexOffered ? (['flex'] as const) : []),
    ...((await batchApiOffered(context.providerBatches)) ? (['batch'] as const) : []),
  ];
  const autopilot = await planner.plan({
    tenant: context.tenant,
    graph: batch.options.graph,
    questions,
    ...(asked === undefined ? {} : { concurrency: asked }),
    modes,
    now,
    deadline,
    budgetUsd,
  });
  const mode = autopilot.plan.mode;
  return {
    mode,
    providerBatch: modes.includes('batch'),
    concurrency: concurrencyFor(mode, asked, questions),
    autopilot,
  };
}

/** A batch's concurrency in a mode: the submitter's, else a provider batch's every question, else the default. */
export function concurrencyFor(mode: BatchMode, asked: number | undefined, questions: number): number {
  if (asked !== undefined) return asked;
  return mode === 'batch' ? Math.min(questions, MAX_PROVIDER_BATCH_CONCURRENCY) : DEFAULT_CONCURRENCY;
}

/** Whether a plan may use the Batch API by default: the provider has one (a failed check leaves it out). */
async function batchApiOffered(check: ProviderBatchesCheck | undefined): Promise<boolean> {
  if (!check) return false;
  return check.supported().catch(() => false);
}
