import { BATCH_PRIORITY } from '../../contracts/job-schema.js';
import type { BatchStatus, BatchUsage } from './batch-schema.js';
import type { BatchMode, ModeSpeeds, QuestionProfile } from './autopilot-plan.js';

/** A planned batch's autopilot as its meta holds it (the `autopilot` field's JSON). */
export interface AutopilotMeta {
  /** ms since the epoch, or null. */
  deadline: number | null;
  budgetUsd: number | null;
  modes: BatchMode[];
  plan: { mode: BatchMode; reason: string; at: number };
  estimate: { costUsd: number; finishAt: number };
  flexFallback: 'live' | 'retry';
  /** What the plan assumed: per question, and how fast each mode goes. */
  profile: QuestionProfile;
  questionCostUsd: Record<BatchMode, number>;
  speeds: ModeSpeeds;
}

/** A batch as its meta hash holds it. */
export interface BatchMeta {
  id: string;
  tenant: string;
  status: BatchStatus;
  graph: string;
  collection: string;
  concurrency: number;
  /** BullMQ priority of the batch's runs. */
  priority: number;
  total: number;
  next: number;
  options: { max_iterations?: number; citations?: boolean; answer_cache?: boolean };
  /** Its runs' model calls go through the provider's Batch API. */
  providerBatch: boolean;
  /** The mode its model calls are sent in now; null: live, as a batch without a plan. */
  mode: BatchMode | null;
  /** Whether the submitter named the concurrency (a re-plan then keeps it). */
  concurrencyAsked: boolean;
  autopilot: AutopilotMeta | null;
  /** Set (JSON) once the budget stopped the batch. */
  stopped: { reason: 'budget'; at: number; left: { questions: number; budgetUsd: number } } | null;
  usage: BatchUsage;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /**
   * Its finished runs by status, as RELEASE counted them; null for a batch made before these counts
   * were kept (its progress reads every run's status instead).
   */
  done: { completed: number; failed: number; cancelled: number } | null;
}

/** The run id of a batch's item `index`. */
export function batchRunId(batchId: string, index: number): string {
  return `${batchId}.i${index}`;
}

/** batchRunId read back: the id's part that names its batch (`<batchId>.i`, what its runs share) and its index. */
export function batchRunParts(runId: string): { prefix: string; index: number } {
  const at = runId.lastIndexOf('.i') + 2;
  return { prefix: runId.slice(0, at), index: Number(runId.slice(at)) };
}

/** A batch's meta hash (HGETALL), or null when it is missing. */
export function parseBatchMeta(fields: Record<string, string>): BatchMeta | null {
  if (!fields.id || !fields.tenant) return null;
  return {
    id: fields.id,
    tenant: fields.tenant,
    status: fields.status as BatchStatus,
    graph: fields.graph!,
    collection: fields.collection!,
    concurrency: Number(fields.concurrency),
    priority: Number(fields.priority ?? BATCH_PRIORITY),
    total: Number(fields.total),
    next: Number(fields.next),
    options: JSON.parse(fields.options ?? '{}') as BatchMeta['options'],
    providerBatch: fields.providerBatch === '1',
    mode: (fields.mode as BatchMode | undefined) ?? null,
    concurrencyAsked: fields.concurrencyAsked === '1',
    autopilot: fields.autopilot ? (JSON.parse(fields.autopilot) as AutopilotMeta) : null,
    stopped: fields.stopped ? (JSON.parse(fields.stopped) as BatchMeta['stopped']) : null,
    usage: batchUsageOf(fields),
    createdAt: Number(fields.createdAt),
    updatedAt: Number(fields.updatedAt),
    finishedAt: fields.finishedAt ? Number(fields.finishedAt) : null,
    done:
      fields.countsDone === '1'
        ? {
            completed: Number(fields.done_completed ?? 0),
            failed: Number(fields.done_failed ?? 0),
            cancelled: Number(fields.done_cancelled ?? 0),
          }
        : null,
  };
}

/** HGETALL's reply inside a script's (a flat list of fields and values) as a record. */
export function fieldsOf(flat: readonly string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let index = 0; index + 1 < flat.length; index += 2) fields[flat[index]!] = flat[index + 1]!;
  return fields;
}

/** The batch's usage totals from its meta hash. */
export function batchUsageOf(fields: Record<string, string>): BatchUsage {
  const number = (field: string) => Number(fields[field] ?? 0);
  return {
    inputTokens: number('u_in'),
    cachedInputTokens: number('u_cached'),
    outputTokens: number('u_out'),
    costUsd: number('u_cost'),
    uncachedCostUsd: number('u_uncached'),
    calls: { live: number('calls_live'), flex: number('calls_flex'), batch: number('calls_batch') },
  };
}

/** The mode a batch's calls go in now: its plan's, else a provider batch's, else live. */
export function currentMode(fields: { mode?: string | null; providerBatch?: string | boolean }): BatchMode {
  if (fields.mode) return fields.mode as BatchMode;
  return fields.providerBatch === '1' || fields.providerBatch === true ? 'batch' : 'live';
}

/**
 * CLAIM's reply: the claimed index with its item, the batch's meta (HGETALL) and the slots the claim left
 * free with items left to fill them, or a negative code alone.
 */
export type ClaimReply = [number, string?, string[]?, number?];
