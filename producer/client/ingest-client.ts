import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { ID_PATTERN } from '../../shared/contracts/ids.js';
import type { DocumentRecord } from '../../shared/retrieval/document-record.js';
import type { IngestProgress } from '../../shared/retrieval/ingest-batch.js';
import { collectionStatuses, type CollectionStatus } from '../../shared/retrieval/collection-status.js';
import { waitForVectors, type WaitForVectorsOptions } from './wait-for-vectors.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import type { IngestJobData } from '../../shared/retrieval/ingest-job.js';
import { RedisDocumentStore } from '../../shared/store/documents/redis-document-store.js';
import type { SearchHit, SearchRequest } from '../../shared/retrieval/search-documents.js';
import { INGEST_QUEUE, queueStreamOptions } from '../../shared/contracts/queues.js';
import { bullmqConnection, type BullmqConnection } from '../../shared/bullmq/bullmq-connection.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import { whenRedisReady } from './redis-ready.js';
import { readSourceFile } from './read-source-file.js';
import { collectFiles } from './collect-files.js';
import { DocumentSearch, type DocumentSearchOptions } from './document-search.js';
import { StorageBudget } from '../../shared/operations/limits/storage-budget.js';
import { Keys } from '../../shared/store/keys.js';
import { bytesOf, documentCharge, failEarly, stageGroup, type HandInTarget, type Pending } from './stage-group.js';
import { UploadReceiver, type ReceivedDocument } from './upload-receiver.js';

/**
 * A file or directory path, a document's bytes under a name, or a file an UploadReceiver has streamed
 * into Redis already (an API upload: its bytes are never in this process whole).
 */
export type IngestSource = string | { name: string; content: Uint8Array } | ReceivedDocument;

export interface IngestOptions {
  /** @default 'default' */
  collection?: string;
  /** @default the client's tenant */
  tenant?: string;
}

/** What `ingest` handed in: documents are `queued` for the workers, `unchanged` or `failed` already. */
export interface IngestBatch {
  batchId: string;
  tenant: string;
  collection: string;
  total: number;
  documents: {
    item: number;
    docId: string | null;
    path: string;
    status: 'queued' | 'unchanged' | 'failed';
    error?: { code: string; message: string };
  }[];
}

/** `vectorStore` is for search and delete; `embedder` embeds search queries (see DocumentSearch). */
export type IngestClientOptions = DocumentSearchOptions;

/** Documents are staged in groups: bounded memory however many files a directory holds. */
const GROUP_FILES = 200;
const GROUP_BYTES = 16 * 1024 * 1024;
/** Files read at once (each at most AGENTQ_INGEST_MAX_BYTES). */
const PARALLEL_READS = 16;
/** A received file left behind by an API that died mid-request lasts this long at most. */
const UPLOAD_TTL_SECONDS = 24 * 3600;

/**
 * Document ingestion and search for producers (the CLI's `ingest` and `search`, the API's
 * `/v1/documents` and `/v1/search`): hands documents to the workers as one job each on INGEST_QUEUE,
 * reports a batch's progress, lists and deletes documents, and searches their chunks. Fails fast when
 * Redis is down, like AgentClient.
 */
export class IngestClient {
  readonly documents: RedisDocumentStore;
  private readonly config: Config;
  private readonly tenant: string;
  private readonly redis: RedisConnection;
  /** Document bytes only: a long command timeout, so big files never race the sub-second one. */
  private readonly blobRedis: RedisConnection;
  private readonly queue: Queue<IngestJobData>;
  /** Search, and the vector store chunks are deleted from. */
  private readonly searcher: DocumentSearch;
  private closing: Promise<void> | undefined;
  private readonly bullmq: BullmqConnection;
  /** Where stageGroup hands documents in. */
  private readonly handIn: HandInTarget;

  constructor(options: IngestClientOptions = {}) {
    this.config = options.config ?? loadConfig();
    this.tenant = options.tenant ?? this.config.tenant;
    this.searcher = new DocumentSearch({ ...options, config: this.config });
    this.redis = connectRedis(this.config, 'producer', this.config.redisCommandTimeoutMs);
    this.redis.on('error', () => undefined); // surfaced per command instead
    this.blobRedis = connectRedis(this.config, 'producer', this.config.ingestWriteTimeoutMs);
    this.documents = new RedisDocumentStore(this.redis, {
      keyPrefix: this.config.keyPrefix,
      retentionSeconds: this.config.retentionSeconds,
    });
    this.bullmq = bullmqConnection(this.config, 'producer', this.config.redisCommandTimeoutMs);
    this.queue = new Queue<IngestJobData>(INGEST_QUEUE, {
      connection: this.bullmq.connection,
      prefix: this.config.queuePrefix,
      ...queueStreamOptions(this.config.queueEventsMaxLen),
    });
    this.queue.on('error', () => undefined);
    const storage = new StorageBudget(this.redis, new Keys(this.config.keyPrefix, this.config.shards), {
      defaultMaxBytes: this.config.tenantMaxBytes,
      retentionSeconds: this.config.retentionSeconds,
    });
    const { documents, queue, blobRedis } = this;
    this.handIn = { documents, queue, blobRedis, maxBytes: this.config.ingestMaxBytes, storage };
  }

  /**
   * Hands documents in for indexing and returns at once with the batch (follow it with `progress` or
   * `wait`). Directories are walked. A document whose bytes equal its indexed version is `unchanged`
   * (nothing is done); one that cannot be read or is too large fails here; the rest are queued, one job
   * each. A document's id derives from tenant, collection and path (or upload name).
   */
  async ingest(
    sources: readonly IngestSource[],
    { collection = 'default', tenant = this.tenant }: IngestOptions = {},
  ): Promise<IngestBatch> {
    checkId('collection', collection);
    checkId('tenant', tenant);
    const paths = await collectFiles(sources.filter((source): source is string => typeof source === 'string'));
    const uploads = sources.filter((source) => typeof source !== 'string');
    for (const upload of uploads)
      if (!upload.name || upload.name.length > 4096)
        throw new AgentqError(
          'INVALID_INPUT',
          'an uploaded document needs a name of 1-4096 characters (its file name)',
        );
    const names = [...paths, ...uploads.map((upload) => upload.name)];
    if (names.length === 0) throw new AgentqError('INVALID_INPUT', 'nothing to ingest: the paths given hold no files');
    await this.ready();
    const batchId = `ing_${randomBytes(12).toString('hex')}`;
    await this.documents.createBatch(tenant, batchId, { collection, total: names.length });
    const batch: IngestBatch = { batchId, tenant, collection, total: names.length, documents: [] };

    let group: Pending[] = [];
    let groupBytes = 0;
    const flush = async () => {
      batch.documents.push(...(await stageGroup(this.handIn, tenant, collection, batchId, group)));
      group = [];
      groupBytes = 0;
    };
    try {
      for (let first = 0; first < names.length; first += PARALLEL_READS) {
        const items = Array.from(
          { length: Math.min(PARALLEL_READS, names.length - first) },
          (_, offset) => first + offset,
        );
        const reads = await Promise.all(
          items.map((item) =>
            item < paths.length
              ? readSourceFile(names[item]!, this.config.ingestMaxBytes)
              : readUpload(uploads[item - paths.length]!),
          ),
        );
        for (const [offset, read] of reads.entries()) {
          const item = first + offset;
          const path = names[item]!;
          if ('error' in read) {
            batch.documents.push(
              await failEarly(this.handIn, tenant, collection, batchId, { item, path, error: read.error }),
            );
            continue;
          }
          const pending: Pending = { item, path, ...read };
          group.push(pending);
          groupBytes += bytesOf(pending);
          if (group.length >= GROUP_FILES || groupBytes >= GROUP_BYTES) await flush();
        }
      }
      await flush();
    } catch (error) {
      throw await this.handInFailed(batch, names, group, error);
    }
    batch.documents.sort((left, right) => left.item - right.item);
    return batch;
  }

  /**
   * The hand-in broke off (Redis slow or gone): fail the documents not handed in, so the batch ends
   * failed with the reason instead of waiting forever, and say what happened and what to do.
   */
  private async handInFailed(
    batch: IngestBatch,
    names: readonly string[],
    group: readonly Pending[],
    error: unknown,
  ): Promise<AgentqError> {
    const handedIn = new Set(batch.documents.map((document) => document.item));
    const missing = names.map((path, item) => ({ item, path })).filter(({ item }) => !handedIn.has(item));
    const groupBytes = group.reduce((sum, pending) => sum + bytesOf(pending), 0);
    const cause = error instanceof Error ? error.message : String(error);
    const message =
      `handing documents to Redis failed (${cause}) while writing ${group.length} document(s), ${(groupBytes / 1024 / 1024).toFixed(1)} MB; ` +
      `${missing.length} of ${batch.total} document(s) were not handed in and are marked failed in batch ${batch.batchId}` +
      `${handedIn.size > 0 ? `; the ${handedIn.size} handed in before are indexed as usual` : ''}. ` +
      `Check that Redis is up and not overloaded (each 1 MiB piece may take AGENTQ_INGEST_WRITE_TIMEOUT_MS=${this.config.ingestWriteTimeoutMs} ms), then ingest again: unchanged documents are skipped`;
    await this.documents
      .failItems(batch.tenant, batch.batchId, missing, { code: 'UNAVAILABLE', message })
      .catch(() => undefined);
    return new AgentqError('UNAVAILABLE', message, {
      retryable: true,
      cause: error,
      details: { batchId: batch.batchId, notHandedIn: missing.length },
    });
  }

  /** A batch's counts and finished documents; null when it does not exist (or expired) for this tenant. */
  async progress(
    batchId: string,
    { tenant = this.tenant, documents = true }: { tenant?: string; documents?: boolean } = {},
  ): Promise<IngestProgress | null> {
    await this.ready();
    return this.documents.progress(tenant, batchId, { documents });
  }

  /** Resolves once every document of the batch is indexed or failed; `onProgress` sees each change. */
  async wait(
    batchId: string,
    {
      tenant = this.tenant,
      timeoutMs = 60 * 60_000,
      intervalMs = 250,
      onProgress,
    }: {
      tenant?: string;
      timeoutMs?: number;
      intervalMs?: number;
      onProgress?: (progress: IngestProgress) => void;
    } = {},
  ): Promise<IngestProgress> {
    const deadline = Date.now() + timeoutMs;
    let seen = -1;
    for (;;) {
      // Counts only while polling; the documents' results once, at the end.
      const progress = await this.progress(batchId, { tenant, documents: false });
      if (!progress)
        throw new AgentqError(
          'NOT_FOUND',
          `ingest batch ${batchId} not found for tenant ${tenant} (it may have expired)`,
        );
      if (progress.done + progress.failed !== seen) {
        seen = progress.done + progress.failed;
        onProgress?.(progress);
      }
      if (progress.finished) return (await this.progress(batchId, { tenant })) ?? progress;
      if (Date.now() > deadline)
        throw new AgentqError(
          'TIMEOUT',
          `ingest batch ${batchId} is not finished after ${timeoutMs} ms (${progress.done + progress.failed}/${progress.total}); are workers running?`,
          { retryable: true },
        );
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  async listDocuments({ collection, tenant = this.tenant }: { collection?: string; tenant?: string } = {}): Promise<
    DocumentRecord[]
  > {
    if (collection !== undefined) checkId('collection', collection);
    await this.ready();
    return this.documents.list(tenant, collection === undefined ? {} : { collection });
  }

  async getDocument(docId: string, { tenant = this.tenant }: { tenant?: string } = {}): Promise<DocumentRecord | null> {
    await this.ready();
    return this.documents.get(tenant, docId);
  }

  /** Deletes the document and its chunks; false when the tenant has no such document. */
  async deleteDocument(docId: string, { tenant = this.tenant }: { tenant?: string } = {}): Promise<boolean> {
    await this.ready();
    const record = await this.documents.get(tenant, docId);
    if (!record) return false;
    // Chunks first: a failure in between leaves a record to delete again, never chunks without a record.
    await (await this.store()).delete(tenant, record.collection, { filter: { docId } });
    const deleted = await this.documents.delete(tenant, docId);
    await this.handIn.storage.release(tenant, documentCharge(docId));
    return deleted;
  }

  /**
   * Deletes every document of a collection and its chunks; → how many documents. Chunks first, per
   * document, as deleteDocument: a failure in between leaves records to delete again, never orphan chunks.
   */
  async deleteDocuments({
    collection,
    tenant = this.tenant,
  }: {
    collection: string;
    tenant?: string;
  }): Promise<number> {
    checkId('collection', collection);
    await this.ready();
    const records = await this.documents.list(tenant, { collection });
    let deleted = 0;
    for (const record of records) {
      await (await this.store()).delete(tenant, collection, { filter: { docId: record.id } });
      if (await this.documents.delete(tenant, record.id)) deleted += 1;
      await this.handIn.storage.release(tenant, documentCharge(record.id));
    }
    return deleted;
  }

  /** The tenant's collections: chunks, and how many chunks still wait for their vector (see CollectionStatus). */
  async collections({ tenant = this.tenant }: { tenant?: string } = {}): Promise<CollectionStatus[]> {
    checkId('tenant', tenant);
    return collectionStatuses(await this.store(), tenant, this.config.embedProvider !== 'none');
  }

  /** One collection's status; null when the tenant has no such collection. */
  async collection(
    collection: string,
    { tenant = this.tenant }: { tenant?: string } = {},
  ): Promise<CollectionStatus | null> {
    checkId('collection', collection);
    return (await this.collections({ tenant })).find((status) => status.name === collection) ?? null;
  }

  /**
   * Resolves once every chunk of the collection has its vector (at once without an embedder, or when
   * the store takes vectors at ingest). Documents are searchable before: this is for a caller who wants
   * the hybrid ranking from the first question (a benchmark, an evaluation). Workers with an embedder
   * must be running, as for `wait`.
   */
  async waitForVectors(
    collection: string,
    { tenant = this.tenant, ...options }: { tenant?: string } & WaitForVectorsOptions = {},
  ): Promise<CollectionStatus | null> {
    checkId('collection', collection);
    return waitForVectors(() => this.collection(collection, { tenant }), options);
  }

  /** Ranked chunks of the tenant's documents (see searchDocuments); with an embedder, the query is embedded too. */
  async search(request: Omit<SearchRequest, 'tenant'> & { tenant?: string }): Promise<SearchHit[]> {
    return this.searcher.search(request);
  }

  /**
   * Receives the files of one upload into Redis as they stream in, within `maxBytes` for all of them
   * (and AGENTQ_INGEST_MAX_BYTES each); hand `receiver.received` to `ingest`, or `discard` them.
   */
  async receiver(tenant: string, { maxBytes }: { maxBytes: number }): Promise<UploadReceiver> {
    checkId('tenant', tenant);
    await this.ready();
    return new UploadReceiver(this.blobRedis, this.documents.keys.documents(tenant), {
      maxBytes,
      fileMaxBytes: this.config.ingestMaxBytes,
      ttlSeconds: Math.min(this.config.retentionSeconds, UPLOAD_TTL_SECONDS),
    });
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      await this.queue.close();
      this.bullmq.close();
      await this.searcher.close();
      for (const redis of [this.redis, this.blobRedis]) {
        if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
        else redis.disconnect();
      }
    })();
    return this.closing;
  }

  private store(): Promise<VectorStore> {
    return this.searcher.store();
  }

  /**
   * Waits until Redis answers on both connections (they are lazy), failing fast if it does not:
   * documents' bytes go through the second one (blobRedis), and a producer connection has no offline
   * queue, so a first ingest right after start-up failed on it ("Stream isn't writeable") when only the
   * first was waited for.
   */
  private async ready(): Promise<void> {
    const timeoutMs = this.config.redisCommandTimeoutMs + 1000;
    await Promise.all([this.redis, this.blobRedis].map((redis) => whenRedisReady(redis, this.config, timeoutMs)));
  }
}

function checkId(what: string, value: string): void {
  if (!ID_PATTERN.test(value))
    throw new AgentqError(
      'INVALID_INPUT',
      `${what} '${value}' must be 1-128 characters of letters, digits, '_', '.' or '-'`,
    );
}

function readUpload(upload: Exclude<IngestSource, string>): { content: Uint8Array } | { received: ReceivedDocument } {
  return 'content' in upload ? { content: upload.content } : { received: upload };
}
