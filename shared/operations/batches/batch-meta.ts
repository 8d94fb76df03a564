import { BATCH_PRIORITY } from '../../contracts/job-schema.js';
import type { BatchStatus } from './batch-schema.js';

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
