import { z } from 'zod';
import { ID_PATTERN } from '../contracts/ids.js';

/**
 * An ingest job on INGEST_QUEUE: ids only (the document's bytes wait in Redis under the document's
 * blob key), so neither Bull Board nor logs show document content. One job per document.
 */
export const ingestJobSchema = z.object({
  v: z.literal(1),
  tenant: z.string().regex(ID_PATTERN),
  collection: z.string().regex(ID_PATTERN),
  docId: z.string().regex(/^doc_[0-9a-f]{32}$/),
  batchId: z.string().regex(ID_PATTERN),
  /** Position of the document in its batch (its result is stored under it). */
  item: z.number().int().min(0),
  contentHash: z.string().regex(/^[0-9a-f]{64}$/),
  path: z.string().min(1).max(4096),
});
export type IngestJobData = z.infer<typeof ingestJobSchema>;

/** A job per document: retried on crashes and transient errors; a document that cannot be parsed fails at once. */
const INGEST_JOB_ATTEMPTS = 5;
export const INGEST_JOB_OPTIONS = {
  attempts: INGEST_JOB_ATTEMPTS,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { count: 5000 },
} as const;

export function ingestJobId(batchId: string, item: number): string {
  return `${batchId}.${item}`;
}
