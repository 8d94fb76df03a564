import type { RedisConnection } from '../../redis/connect-redis.js';
import { Keys, type DocumentKeys } from '../keys.js';
import { runScript } from '../../redis/create-redis.js';
import { writeBlob } from './write-blob.js';
import { fromDocumentFields, toDocumentFields, type DocumentRecord } from '../../retrieval/document-record.js';
import type { IngestItemResult, IngestProgress } from '../../retrieval/ingest-batch.js';
import { luaScript } from '../../redis/lua-script.js';

/**
 * Records one finished document of a batch, once: the result is written with HSETNX, so a job re-run
 * after a crash counts nothing twice. The document record is updated only while the version this job
 * indexed is still the latest one handed in (pendingHash), so a slow job never overwrites a newer
 * version's record, and a deleted document is not brought back.
 *
 * KEYS: 1 record, 2 batch, 3 batch results, 4 collection index.
 * ARGV: 1 item, 2 result JSON, 3 counter ('done' | 'failed'), 4 content hash, 5 now (ms), 6 ttl (s),
 *       7 doc id, 8… record field/value pairs (none: leave the record alone).
 * Returns 1 when the record was updated.
 */
const FINISH_ITEM = luaScript(new URL('./lua/finish-ingest-item-4.lua', import.meta.url));

/**
 * Fails the items of a hand-in that broke off, each once (HSETNX: an item finished meanwhile keeps its
 * result and is not counted twice). KEYS: 1 batch, 2 batch results. ARGV: 1 error message, 2 now (ISO),
 * 3 ttl (s), then item/result-JSON pairs.
 */
const FAIL_ITEMS = luaScript(new URL('./lua/fail-ingest-items-2.lua', import.meta.url));

/** KEYS: 1 record. ARGV: 1 content hash, 2 now (ISO). Sets `indexing` while the hash is the latest version's. */
const MARK_INDEXING = luaScript(new URL('./lua/mark-indexing-1.lua', import.meta.url));

/**
 * A document handed in for indexing: its record fields and its new version's bytes, given (`content`) or
 * already in Redis under the key an upload streamed them to (`uploadKey`, a key of the same tenant).
 */
export type StagedDocument = {
  record: Pick<DocumentRecord, 'id' | 'collection' | 'title' | 'path' | 'bytes' | 'batchId'> & { pendingHash: string };
} & ({ content: Uint8Array; uploadKey?: never } | { uploadKey: string; content?: never });

interface RedisDocumentStoreOptions {
  /** @default 'agentq' */
  keyPrefix?: string;
  /** Batches and not-yet-indexed uploads expire after this long. @default 7 days */
  retentionSeconds?: number;
}

/**
 * Document records and ingest batches in Redis (both sides use it: producers hand documents in and read
 * progress, workers record what they indexed). Every key is the tenant's (shared/store/keys.ts).
 */
export class RedisDocumentStore {
  readonly keys: Keys;
  private readonly retentionSeconds: number;

  constructor(
    readonly redis: RedisConnection,
    { keyPrefix, retentionSeconds = 7 * 24 * 3600 }: RedisDocumentStoreOptions = {},
  ) {
    this.keys = new Keys(keyPrefix);
    this.retentionSeconds = retentionSeconds;
  }

  private tenantKeys(tenant: string): DocumentKeys {
    return this.keys.documents(tenant);
  }

  async get(tenant: string, docId: string): Promise<DocumentRecord | null> {
    return fromDocumentFields(await this.redis.hgetall(this.tenantKeys(tenant).record(docId)));
  }

  /** Several records at once (null for missing ones), in the order asked. */
  async getMany(tenant: string, docIds: readonly string[]): Promise<(DocumentRecord | null)[]> {
    if (docIds.length === 0) return [];
    const keys = this.tenantKeys(tenant);
    const pipeline = this.redis.pipeline();
    for (const docId of docIds) pipeline.hgetall(keys.record(docId));
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, fields]) => {
      if (error) throw error;
      return fromDocumentFields(fields as Record<string, string>);
    });
  }

  /** The tenant's documents, of one collection or of all, most recently updated first. */
  async list(tenant: string, { collection }: { collection?: string } = {}): Promise<DocumentRecord[]> {
    const keys = this.tenantKeys(tenant);
    const collections = collection === undefined ? await this.redis.smembers(keys.collections) : [collection];
    const ids = new Set<string>();
    for (const name of collections)
      for (const id of await this.redis.zrevrange(keys.collection(name), 0, -1)) ids.add(id);
    const records = (await this.getMany(tenant, [...ids])).filter(
      (record): record is DocumentRecord => record !== null,
    );
    return records.sort((left, right) => right.updatedAt.localeCompare(left.updatedAt));
  }

  async collections(tenant: string): Promise<string[]> {
    return (await this.redis.smembers(this.tenantKeys(tenant).collections)).sort();
  }

  /** Opens a batch of `total` documents; its progress expires with the retention. */
  async createBatch(
    tenant: string,
    batchId: string,
    { collection, total, now = Date.now() }: { collection: string; total: number; now?: number },
  ): Promise<void> {
    const key = this.tenantKeys(tenant).batch(batchId);
    const at = new Date(now).toISOString();
    await this.redis
      .multi()
      .hset(key, { tenant, collection, total, done: 0, failed: 0, createdAt: at, updatedAt: at })
      .expire(key, this.retentionSeconds)
      .exec();
  }

  /**
   * Hands new versions in: stores their bytes (until indexed or the retention ends) and marks their
   * records `queued` with the new pendingHash. The indexed version (contentHash, chunks) stays as it is
   * until a worker replaces it.
   */
  async stage(
    tenant: string,
    documents: readonly StagedDocument[],
    now = Date.now(),
    { blobRedis = this.redis }: { blobRedis?: RedisConnection } = {},
  ): Promise<void> {
    if (documents.length === 0) return;
    const keys = this.tenantKeys(tenant);
    const at = new Date(now).toISOString();
    // Bytes first, in bounded pieces on their own connection (see writeBlob); the records only after.
    // Streamed uploads are there already: RENAME (same tag, one slot) makes them the version's blob.
    for (const { record, content, uploadKey } of documents) {
      const blob = keys.blob(record.id, record.pendingHash);
      if (content) await writeBlob(blobRedis, blob, content, this.retentionSeconds);
      else
        for (const [error] of (await blobRedis
          .multi()
          .rename(uploadKey, blob)
          .expire(blob, this.retentionSeconds)
          .exec()) ?? [])
          if (error) throw error;
    }
    const pipeline = this.redis.pipeline();
    for (const { record } of documents) {
      const key = keys.record(record.id);
      pipeline.hset(key, toDocumentFields({ ...record, tenant, status: 'queued', error: null, updatedAt: at }));
      pipeline.hsetnx(key, 'createdAt', at);
      pipeline.zadd(keys.collection(record.collection), now, record.id);
      pipeline.sadd(keys.collections, record.collection);
    }
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
  }

  /**
   * A hand-in that broke off: the items never handed in are failed with `error`, so the batch finishes
   * (failed, with the reason) instead of waiting at n/total forever.
   */
  async failItems(
    tenant: string,
    batchId: string,
    items: readonly { item: number; path: string }[],
    error: { code: string; message: string },
    now = Date.now(),
  ): Promise<void> {
    if (items.length === 0) return;
    const keys = this.tenantKeys(tenant);
    const results = items.flatMap(({ item, path }) => [
      String(item),
      JSON.stringify({ item, docId: null, path, status: 'failed', error } satisfies IngestItemResult),
    ]);
    await runScript(
      this.redis,
      FAIL_ITEMS,
      [keys.batch(batchId), keys.batchResults(batchId)],
      [error.message, new Date(now).toISOString(), this.retentionSeconds, ...results],
    );
  }

  async content(tenant: string, docId: string, contentHash: string): Promise<Buffer | null> {
    return this.redis.getBuffer(this.tenantKeys(tenant).blob(docId, contentHash));
  }

  async dropContent(tenant: string, docId: string, contentHash: string): Promise<void> {
    await this.redis.del(this.tenantKeys(tenant).blob(docId, contentHash));
  }

  /** A worker took the version up (only while it is still the latest one). */
  async markIndexing(tenant: string, docId: string, contentHash: string, now = Date.now()): Promise<void> {
    await runScript(
      this.redis,
      MARK_INDEXING,
      [this.tenantKeys(tenant).record(docId)],
      [contentHash, new Date(now).toISOString()],
    );
  }

  /**
   * Records a batch item's result once, and updates the document record when `record` is given and the
   * version is still the latest (see FINISH_ITEM). Returns whether the record was updated.
   */
  async finishItem(
    tenant: string,
    {
      batchId,
      collection,
      docId,
      contentHash,
      result,
      record,
      now = Date.now(),
    }: {
      batchId: string;
      collection: string;
      docId: string | null;
      contentHash: string;
      result: IngestItemResult;
      record?: Partial<DocumentRecord>;
      now?: number;
    },
  ): Promise<boolean> {
    const keys = this.tenantKeys(tenant);
    const fields =
      record && docId
        ? Object.entries(toDocumentFields({ ...record, updatedAt: new Date(now).toISOString() })).flat()
        : [];
    const applied = await runScript<number>(
      this.redis,
      FINISH_ITEM,
      [keys.record(docId ?? 'none'), keys.batch(batchId), keys.batchResults(batchId), keys.collection(collection)],
      [
        result.item,
        JSON.stringify(result),
        result.status === 'failed' ? 'failed' : 'done',
        contentHash,
        now,
        this.retentionSeconds,
        docId ?? '',
        ...fields,
      ],
    );
    return applied === 1;
  }

  /** The batch's counts, and its documents' results unless `documents: false` (pollers of big batches want counts only). */
  async progress(
    tenant: string,
    batchId: string,
    { documents = true }: { documents?: boolean } = {},
  ): Promise<IngestProgress | null> {
    const keys = this.tenantKeys(tenant);
    const [batch, results] = await Promise.all([
      this.redis.hgetall(keys.batch(batchId)),
      documents ? this.redis.hvals(keys.batchResults(batchId)) : [],
    ]);
    if (!batch.total) return null;
    const total = Number(batch.total);
    const done = Number(batch.done ?? 0);
    const failed = Number(batch.failed ?? 0);
    return {
      batchId,
      tenant,
      collection: batch.collection ?? '',
      total,
      done,
      failed,
      finished: done + failed >= total,
      ...(batch.error ? { error: batch.error } : {}),
      createdAt: batch.createdAt ?? '',
      updatedAt: batch.updatedAt ?? '',
      documents: results
        .map((json) => JSON.parse(json) as IngestItemResult)
        .sort((left, right) => left.item - right.item),
    };
  }

  /** Removes the record (and any upload still waiting); false when there was none. The caller removes its chunks. */
  async delete(tenant: string, docId: string): Promise<boolean> {
    const keys = this.tenantKeys(tenant);
    const record = await this.get(tenant, docId);
    if (!record) return false;
    const transaction = this.redis.multi().del(keys.record(docId)).zrem(keys.collection(record.collection), docId);
    if (record.pendingHash) transaction.del(keys.blob(docId, record.pendingHash));
    await transaction.exec();
    return true;
  }
}
