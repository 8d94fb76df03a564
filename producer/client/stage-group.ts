import type { Queue } from 'bullmq';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { StorageBudget } from '../../shared/operations/limits/storage-budget.js';
import { contentHashOf, documentIdFor } from '../../shared/retrieval/document-record.js';
import type { IngestItemResult } from '../../shared/retrieval/ingest-batch.js';
import { INGEST_JOB_OPTIONS, ingestJobId, type IngestJobData } from '../../shared/retrieval/ingest-job.js';
import type { RedisDocumentStore, StagedDocument } from '../../shared/store/documents/redis-document-store.js';
import type { IngestBatch } from './ingest-client.js';
import type { ReceivedDocument } from './upload-receiver.js';

/**
 * Where IngestClient's `ingest` hands documents in, group by group (it reads and batches them; this
 * stages them): the document store, the ingest queue, the connection for bytes, the size limit.
 */
export interface HandInTarget {
  documents: RedisDocumentStore;
  queue: Queue<IngestJobData>;
  blobRedis: RedisConnection;
  /** AGENTQ_INGEST_MAX_BYTES */
  maxBytes: number;
  /** The tenants' storage budgets: a document is charged its bytes (`doc:<docId>`) until it is deleted. */
  storage: StorageBudget;
}

/** A document's charge in its tenant's storage budget. */
export const documentCharge = (docId: string) => `doc:${docId}`;

/** A document read (its bytes) or received (its bytes in Redis already), waiting to be staged. */
export type Pending = { item: number; path: string } & ({ content: Uint8Array } | { received: ReceivedDocument });

export const bytesOf = (pending: Pending) =>
  'content' in pending ? pending.content.byteLength : pending.received.bytes;

/** A document that fails before it is handed in (unreadable, too large): its result is recorded at once. */
export async function failEarly(
  target: HandInTarget,
  tenant: string,
  collection: string,
  batchId: string,
  { item, path, error }: { item: number; path: string; error: { code: string; message: string } },
) {
  const result: IngestItemResult = { item, docId: null, path, status: 'failed', error };
  await target.documents.finishItem(tenant, { batchId, collection, docId: null, contentHash: '', result });
  return { item, docId: null, path, status: 'failed' as const, error };
}

/** One group: unchanged documents are finished at once; the others are staged and queued. */
export async function stageGroup(
  target: HandInTarget,
  tenant: string,
  collection: string,
  batchId: string,
  group: readonly Pending[],
): Promise<IngestBatch['documents']> {
  if (group.length === 0) return [];
  const entries = group.map((pending) => ({
    ...pending,
    bytes: bytesOf(pending),
    docId: documentIdFor(tenant, collection, pending.path),
    hash: 'content' in pending ? contentHashOf(pending.content) : pending.received.contentHash,
  }));
  const existing = await target.documents.getMany(
    tenant,
    entries.map((entry) => entry.docId),
  );
  const results: IngestBatch['documents'] = [];
  const staged: StagedDocument[] = [];
  const jobs: { name: string; data: IngestJobData; opts: typeof INGEST_JOB_OPTIONS & { jobId: string } }[] = [];
  for (const [index, entry] of entries.entries()) {
    const record = existing[index];
    if (entry.bytes > target.maxBytes) {
      results.push(
        await failEarly(target, tenant, collection, batchId, {
          item: entry.item,
          path: entry.path,
          error: {
            code: 'INVALID_INPUT',
            message: `${entry.path} is ${entry.bytes} bytes, over the limit of ${target.maxBytes} (AGENTQ_INGEST_MAX_BYTES)`,
          },
        }),
      );
      continue;
    }
    if (record?.status === 'indexed' && record.contentHash === entry.hash && record.pendingHash === entry.hash) {
      const result: IngestItemResult = {
        item: entry.item,
        docId: entry.docId,
        path: entry.path,
        status: 'unchanged',
        chunks: record.chunkCount,
        ...(record.type ? { type: record.type } : {}),
      };
      await target.documents.finishItem(tenant, {
        batchId,
        collection,
        docId: entry.docId,
        contentHash: entry.hash,
        result,
      });
      results.push({ item: entry.item, docId: entry.docId, path: entry.path, status: 'unchanged' });
      continue;
    }
    // The new version's bytes replace the old one's in the tenant's storage budget; a document past the
    // budget fails alone, with the reason, and the rest of the batch goes on.
    try {
      await target.storage.release(tenant, documentCharge(entry.docId));
      await target.storage.charge(tenant, documentCharge(entry.docId), entry.bytes);
    } catch (error) {
      if (!AgentqError.isInstance(error) || error.code !== 'STORAGE_BUDGET_EXCEEDED') throw error;
      results.push(
        await failEarly(target, tenant, collection, batchId, {
          item: entry.item,
          path: entry.path,
          error: { code: error.code, message: `${entry.path}: ${error.message}` },
        }),
      );
      continue;
    }
    const title =
      record?.title ||
      entry.path
        .split('/')
        .pop()!
        .replace(/\.[^.]+$/, '');
    staged.push({
      record: {
        id: entry.docId,
        collection,
        title,
        path: entry.path,
        bytes: entry.bytes,
        batchId,
        pendingHash: entry.hash,
      },
      ...('content' in entry ? { content: entry.content } : { uploadKey: entry.received.uploadKey }),
    });
    jobs.push({
      name: 'ingest',
      data: {
        v: 1,
        tenant,
        collection,
        docId: entry.docId,
        batchId,
        item: entry.item,
        contentHash: entry.hash,
        path: entry.path,
      },
      opts: { ...INGEST_JOB_OPTIONS, jobId: ingestJobId(batchId, entry.item) },
    });
    results.push({ item: entry.item, docId: entry.docId, path: entry.path, status: 'queued' });
  }
  // Records and bytes before jobs: a worker never takes a job whose document is not there yet.
  await target.documents.stage(tenant, staged, Date.now(), { blobRedis: target.blobRedis });
  if (jobs.length > 0) await target.queue.addBulk(jobs);
  // Received bytes nobody will index (unchanged, too large) go now rather than at their TTL.
  const handedIn = new Set(staged.map((document) => document.uploadKey));
  const unused = entries.flatMap((entry) =>
    'received' in entry && !handedIn.has(entry.received.uploadKey) ? [entry.received.uploadKey] : [],
  );
  if (unused.length > 0) await target.blobRedis.del(...unused);
  return results;
}
