import { basename, extname } from 'node:path';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { AgentqError, toAgentqError } from '../../shared/contracts/errors.js';
import { toChunkRecords } from '../../shared/retrieval/chunk-records.js';
import type { IngestItemResult } from '../../shared/retrieval/ingest-batch.js';
import { ingestJobSchema, type IngestJobData } from '../../shared/retrieval/ingest-job.js';
import type { RedisDocumentStore } from '../../shared/store/documents/redis-document-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { WarningGate } from '../../shared/telemetry/warning-gate.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import type { ParsePool } from './parse-pool.js';

interface IngestProcessorOptions {
  documents: RedisDocumentStore;
  /** Opened on first use: a worker that never ingests never touches the store. */
  vectorStore: () => VectorStore;
  pool: ParsePool;
  chunking: { maxTokens: number; overlapTokens: number };
  /** Embeds the chunks (the store keeps the vectors beside the text). @default none (lexical search only) */
  embedder?: Embedder;
  /**
   * Adds the vectors after the document is indexed (VectorBuilder), when the store can take them later
   * (`setVectors`): the chunks are written without vectors, searchable by their words at once, and the
   * collection is handed to the builder. Without it, or with a store that cannot, the chunks are embedded
   * here, before they are written. @default none
   */
  vectorsLater?: { added(tenant: string, collection: string): Promise<void> };
  logger: Logger;
  /** Warnings repeated for every document while the store's disk is full, as one line per interval with a count. */
  warnings?: WarningGate;
  /** How long a document waits for space when the store's disk is full (STORAGE_FULL) before it is tried again. @default 5000 */
  storageFullRetryMs?: number;
}

/** The file name without its extension: the title of a document that names none itself. */
function titleFromPath(path: string): string {
  const name = basename(path);
  return name.slice(0, name.length - extname(name).length) || name;
}

/**
 * Indexes one document per job (INGEST_QUEUE): reads the version handed in, parses and chunks it in the
 * ParsePool's threads, upserts its chunks (ids from docId and position, so a re-run writes the same
 * records) and then deletes the chunks of any other version, then records the result once. With an
 * embedder and `vectorsLater`, the chunks are written without vectors (searchable by their words as
 * soon as they are written) and their vectors are added in the background (VectorBuilder). Every step
 * can run again after a crash: a job re-delivered after its worker died ends with the document indexed
 * once. A document that cannot be parsed fails at once (not retried) with the reason in its record
 * and in the batch result; other errors are retried with backoff, and recorded after the last attempt.
 */
export class IngestProcessor {
  constructor(private readonly options: IngestProcessorOptions) {}

  process = async (job: Job<IngestJobData>, token?: string): Promise<string> => {
    const parsed = ingestJobSchema.safeParse(job.data);
    if (!parsed.success)
      throw new UnrecoverableError(
        `invalid ingest job ${job.id}: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
    const data = parsed.data;
    try {
      return await this.index(data);
    } catch (error) {
      const failure = toAgentqError(error);
      if (failure.code === 'STORAGE_FULL' && token !== undefined) await this.waitForSpace(job, token, data, failure);
      const attempts = job.opts.attempts ?? 1;
      const last = !failure.retryable || job.attemptsMade + 1 >= attempts;
      this.options.logger.warn(
        {
          docId: data.docId,
          path: data.path,
          attempt: job.attemptsMade + 1,
          code: failure.code,
          err: failure.message,
          final: last,
        },
        'ingest attempt failed',
      );
      if (!last) throw failure;
      await this.recordFailure(data, failure);
      throw new UnrecoverableError(`${failure.code}: ${failure.message}`);
    }
  };

  /**
   * The store's disk is full: the document waits (its job delayed, no attempt spent) and is tried again,
   * until there is room; nothing it wrote is lost, as the write that failed was one transaction. Said once
   * per interval (a full disk fails every document in hand, every few seconds).
   */
  private async waitForSpace(job: Job<IngestJobData>, token: string, data: IngestJobData, failure: AgentqError) {
    const retryInMs = this.options.storageFullRetryMs ?? 5000;
    const fields = { docId: data.docId, path: data.path, code: failure.code, err: failure.message, retryInMs };
    const message = 'ingest waits for disk space: the document is tried again without spending an attempt';
    if (this.options.warnings) this.options.warnings.warn('storage full', fields, message);
    else this.options.logger.warn(fields, message);
    await job.moveToDelayed(Date.now() + retryInMs, token);
    throw new DelayedError();
  }

  /** Records the document's failure in its record and its batch (once; safe to call again). */
  async recordFailure(data: IngestJobData, failure: AgentqError): Promise<void> {
    const error = { code: failure.code, message: failure.message };
    await this.options.documents.finishItem(data.tenant, {
      batchId: data.batchId,
      collection: data.collection,
      docId: data.docId,
      contentHash: data.contentHash,
      result: { item: data.item, docId: data.docId, path: data.path, status: 'failed', error },
      record: { status: 'failed', error },
    });
    await this.options.documents.dropContent(data.tenant, data.docId, data.contentHash);
  }

  private async index(data: IngestJobData): Promise<string> {
    const { documents, logger } = this.options;
    const { tenant, docId, contentHash } = data;
    const finish = (
      result: Omit<IngestItemResult, 'item' | 'docId' | 'path'>,
      record?: Parameters<RedisDocumentStore['finishItem']>[1]['record'],
    ) =>
      documents.finishItem(tenant, {
        batchId: data.batchId,
        collection: data.collection,
        docId,
        contentHash,
        result: { item: data.item, docId, path: data.path, ...result },
        ...(record ? { record } : {}),
      });

    const record = await documents.get(tenant, docId);
    if (!record) {
      await finish({ status: 'deleted' });
      return 'deleted before indexing';
    }
    if (record.pendingHash !== contentHash) {
      await finish({ status: 'superseded' });
      return 'superseded by a newer version';
    }
    if (record.status === 'indexed' && record.contentHash === contentHash) {
      // Indexed already: by an earlier attempt that died before it could finish, or by another batch.
      await finish({ status: 'unchanged', chunks: record.chunkCount, ...(record.type ? { type: record.type } : {}) });
      await documents.dropContent(tenant, docId, contentHash);
      return 'unchanged';
    }
    const content = await documents.content(tenant, docId, contentHash);
    if (!content) {
      throw new AgentqError(
        'NOT_FOUND',
        `the uploaded bytes of ${data.path} are gone (they expire after AGENTQ_RETENTION_SECONDS, or the document was deleted); ingest it again`,
      );
    }
    await documents.markIndexing(tenant, docId, contentHash);
    const started = Date.now();
    const result = await this.options.pool.parse({ bytes: content, name: data.path, ...this.options.chunking });
    const title = result.title ?? titleFromPath(data.path);
    const store = this.options.vectorStore();
    const later =
      this.options.embedder && this.options.vectorsLater && store.setVectors ? this.options.vectorsLater : null;
    const vectors =
      this.options.embedder && !later
        ? await this.embed(
            this.options.embedder,
            result.chunks.map((chunk) => chunk.text),
          )
        : undefined;
    const records = toChunkRecords(
      result.chunks,
      {
        docId,
        title,
        path: data.path,
        type: result.type,
        contentHash,
        ...(result.metadata ? { metadata: result.metadata } : {}),
      },
      vectors,
    );
    // New chunks first, then the old version's: the document stays searchable throughout.
    await store.upsert(tenant, data.collection, records);
    await store.delete(tenant, data.collection, { filter: { docId, contentHash: { notIn: [contentHash] } } });
    // Before the document counts as indexed: a crash in between runs the job again, which marks it again.
    if (later && records.length > 0) await later.added(tenant, data.collection);
    const applied = await finish(
      { status: 'indexed', type: result.type, title, chunks: records.length },
      {
        status: 'indexed',
        type: result.type,
        title,
        pages: result.pages,
        chunkCount: records.length,
        contentHash,
        error: null,
        indexedAt: new Date().toISOString(),
      },
    );
    // Deleted while it was being indexed: take back the chunks just written (a newer version cleans up for itself).
    if (!applied && !(await documents.get(tenant, docId)))
      await store.delete(tenant, data.collection, { filter: { docId } });
    await documents.dropContent(tenant, docId, contentHash);
    logger.info(
      { docId, path: data.path, type: result.type, chunks: records.length, ms: Date.now() - started },
      'document indexed',
    );
    return `indexed ${records.length} chunks`;
  }

  private async embed(embedder: Embedder, texts: string[]): Promise<number[][]> {
    // The embedder batches for its provider; the vector store gets them in the chunks' order.
    const { vectors } = await embedder.embed(texts, { input: 'document' });
    if (vectors.length !== texts.length)
      throw new AgentqError(
        'PROVIDER_ERROR',
        `the embedder returned ${vectors.length} vectors for ${texts.length} chunks`,
        { retryable: true },
      );
    return vectors;
  }
}
