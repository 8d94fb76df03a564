import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Database as Connection, Statement } from 'better-sqlite3';
import { AgentqError } from '../../contracts/errors.js';
import {
  checkCollection,
  checkEnsureCollection,
  checkFilter,
  checkPendingLimit,
  checkQuery,
  checkRecords,
  checkTenant,
  checkVectorUpdates,
} from '../../ports/vector-store-arguments.js';
import type {
  CollectionInfo,
  DeleteSelector,
  PayloadFilter,
  PendingVector,
  VectorHit,
  VectorQuery,
  VectorRecord,
  VectorStore,
  VectorUpdate,
} from '../../ports/vector-store.js';
import { fuseHybrid as fuse } from '../../retrieval/fuse-hybrid.js';
import { DenseVectorCache, type DenseNeighbour } from './dense-vector-cache.js';
import { denseSql } from './dense-sql.js';
import { toFtsQuery } from './fts-query.js';
import { payloadFilterSql } from './payload-filter-sql.js';
import { createVectorTable, SCHEMA, vectorTable } from './sqlite-schema.js';
import { hasFilter, toHit, type ChunkRow, type Hit } from './sqlite-hit.js';
import { ensureCollectionDimensions } from './collection-dimensions.js';
import { sqliteWriteError } from './sqlite-write-error.js';
import { sqliteModules } from './sqlite-modules.js';

export interface SqliteVectorStoreOptions {
  /** The database file (its folder is created), or `:memory:`. */
  path: string;
  /** How long a write waits for another process's write to finish before failing (retryable). @default 5000 */
  busyTimeoutMs?: number;
  /**
   * BM25 weight of a record's `context` (title, headings) relative to its `text`. Titles name what a
   * passage is about more reliably than its words do (the usual title^3 of search engines): on HotpotQA
   * questions, 3 raised recall@5 from 75% to 79%. @default 3
   */
  contextWeight?: number;
  /**
   * Bytes of vectors kept in memory for dense search (DenseVectorCache: a collection's vectors as one
   * Float32Array, scored in JS: ~2.6 ms of CPU per search instead of sqlite-vec's ~5.2 ms scan at
   * 4,858 × 512, bench/dense-search.ts). A collection larger than this, or a search over all collections, is searched with
   * sqlite-vec. 0 turns the cache off. @default 128 MiB (~65k vectors of 512)
   */
  vectorCacheBytes?: number;
}

/**
 * The embedded vector store (used when QDRANT_URL is unset): one SQLite file. Lexical search is FTS5
 * with `bm25()` (unicode61 tokenizer, diacritics removed); dense vectors, when records carry them, are
 * kept in sqlite-vec `vec0` tables and searched by cosine distance.
 *
 * Several processes may share the file: WAL journal (readers never wait for the writer), a busy
 * timeout for writers, and every write is one `BEGIN IMMEDIATE` transaction, so a process killed
 * mid-write leaves the previous state. Writes are short (one document's chunks) because
 * better-sqlite3 is synchronous: a writer waiting for another blocks its event loop for that long.
 *
 * Limits: BM25 statistics (document frequencies, average length) are computed over the whole file,
 * all tenants together, so a tenant's scores (not which records it can see) depend slightly on other
 * tenants' text. Dense search is exact (brute force), fine up to some 100k vectors per tenant; beyond
 * that, or for several machines, use Qdrant.
 */
export class SqliteVectorStore implements VectorStore {
  readonly provider = 'sqlite';
  private readonly db: Connection;
  private readonly statements = new Map<string, Statement>();
  private readonly contextWeight: number;
  private readonly cache: DenseVectorCache | null;

  constructor({
    path,
    busyTimeoutMs = 5000,
    contextWeight = 3,
    vectorCacheBytes = 128 * 1024 * 1024,
  }: SqliteVectorStoreOptions) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const { Database, sqliteVec } = sqliteModules();
    this.db = new Database(path);
    this.contextWeight = contextWeight;
    // busy_timeout first: switching to WAL itself waits for other connections.
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    this.db.pragma('journal_mode = WAL');
    // With WAL, NORMAL survives a killed process (the OS keeps the written pages); only a power loss can
    // drop the last transactions, and re-ingesting restores them.
    this.db.pragma('synchronous = NORMAL');
    sqliteVec.load(this.db);
    this.write(() => this.db.exec(SCHEMA));
    this.cache = vectorCacheBytes > 0 ? new DenseVectorCache(this.db, vectorCacheBytes) : null;
  }

  async ensureCollection(tenant: string, collection: string, options: { dimensions?: number } = {}): Promise<void> {
    const dimensions = checkEnsureCollection(tenant, collection, options.dimensions);
    this.write(() =>
      ensureCollectionDimensions((sql) => this.statement(sql), tenant, collection, dimensions, 'CONFLICT'),
    );
  }

  async listCollections(tenant: string): Promise<CollectionInfo[]> {
    checkTenant(tenant);
    const rows = this.statement(
      `select name, dimensions, (select count(*) from chunks c where c.tenant = k.tenant and c.collection = k.name) as count,
         (select count(*) from chunks c where c.tenant = k.tenant and c.collection = k.name and c.dimensions is null) as missing
       from collections k where tenant = ? order by name`,
    ).all(tenant) as { name: string; dimensions: number | null; count: number; missing: number }[];
    return rows.map(({ name, dimensions, count, missing }) => ({ name, dimensions, count, missingVectors: missing }));
  }

  async deleteCollection(tenant: string, collection: string): Promise<boolean> {
    checkTenant(tenant);
    checkCollection(collection);
    return this.write(() => {
      this.statement('delete from chunks where tenant = ? and collection = ?').run(tenant, collection);
      return (
        this.statement('delete from collections where tenant = ? and name = ?').run(tenant, collection).changes > 0
      );
    });
  }

  async upsert(tenant: string, collection: string, records: readonly VectorRecord[]): Promise<void> {
    checkTenant(tenant);
    checkCollection(collection);
    const dimensions = checkRecords(records);
    const rows = records.map((record) => ({ record, payload: JSON.stringify(record.payload ?? {}) }));
    this.write(() => {
      ensureCollectionDimensions((sql) => this.statement(sql), tenant, collection, dimensions, 'INVALID_INPUT');
      if (dimensions !== null) createVectorTable(this.db, dimensions);
      const find = this.statement(
        'select rowid, dimensions from chunks where tenant = ? and collection = ? and id = ?',
      );
      for (const { record, payload } of rows) {
        const vectorLength = record.vector?.length ?? null;
        const existing = find.get(tenant, collection, record.id) as
          { rowid: number; dimensions: number | null } | undefined;
        let rowid: number | bigint;
        if (existing) {
          rowid = existing.rowid;
          if (existing.dimensions !== null)
            this.statement(`delete from ${vectorTable(existing.dimensions)} where rowid = ?`).run(BigInt(rowid));
          this.statement('update chunks set text = ?, context = ?, payload = ?, dimensions = ? where rowid = ?').run(
            record.text,
            record.context ?? '',
            payload,
            vectorLength,
            rowid,
          );
        } else {
          rowid = this.statement(
            'insert into chunks (tenant, collection, id, text, context, payload, dimensions) values (?, ?, ?, ?, ?, ?, ?)',
          ).run(
            tenant,
            collection,
            record.id,
            record.text,
            record.context ?? '',
            payload,
            vectorLength,
          ).lastInsertRowid;
        }
        if (record.vector && vectorLength !== null) {
          // vec0 wants its rowid as an integer (BigInt binds as one) and the vector as float32 bytes.
          this.statement(
            `insert into ${vectorTable(vectorLength)} (rowid, tenant, collection, embedding) values (?, ?, ?, ?)`,
          ).run(BigInt(rowid), tenant, collection, new Float32Array(record.vector));
        }
      }
    });
  }

  async pendingVectors(tenant: string, collection: string, options: { limit: number }): Promise<PendingVector[]> {
    checkTenant(tenant);
    checkCollection(collection);
    const limit = checkPendingLimit(options?.limit);
    return this.statement(
      'select id, text from chunks where tenant = ? and collection = ? and dimensions is null order by rowid limit ?',
    ).all(tenant, collection, limit) as PendingVector[];
  }

  async setVectors(tenant: string, collection: string, updates: readonly VectorUpdate[]): Promise<number> {
    checkTenant(tenant);
    checkCollection(collection);
    const dimensions = checkVectorUpdates(updates);
    if (dimensions === null) return 0;
    return this.write(() => {
      ensureCollectionDimensions((sql) => this.statement(sql), tenant, collection, dimensions, 'INVALID_INPUT');
      createVectorTable(this.db, dimensions);
      // Still without a vector and still this text: a record replaced since it was read keeps its new text's turn.
      const find = this.statement(
        'select rowid from chunks where tenant = ? and collection = ? and id = ? and dimensions is null and text = ?',
      );
      const insert = this.statement(
        `insert into ${vectorTable(dimensions)} (rowid, tenant, collection, embedding) values (?, ?, ?, ?)`,
      );
      const mark = this.statement('update chunks set dimensions = ? where rowid = ?');
      let set = 0;
      for (const update of updates) {
        const row = find.get(tenant, collection, update.id, update.text) as { rowid: number } | undefined;
        if (!row) continue;
        insert.run(BigInt(row.rowid), tenant, collection, new Float32Array(update.vector));
        mark.run(dimensions, row.rowid);
        set += 1;
      }
      return set;
    });
  }

  async delete(tenant: string, collection: string, selector: DeleteSelector): Promise<void> {
    checkTenant(tenant);
    checkCollection(collection);
    if ('ids' in selector) {
      if (!Array.isArray(selector.ids) || selector.ids.some((id) => typeof id !== 'string'))
        throw new AgentqError('INVALID_INPUT', 'vector store: delete {ids} takes an array of string ids');
      if (selector.ids.length === 0) return;
      this.write(() =>
        this.statement(
          'delete from chunks where tenant = ? and collection = ? and id in (select value from json_each(?))',
        ).run(tenant, collection, JSON.stringify(selector.ids)),
      );
      return;
    }
    checkFilter(selector.filter);
    if (Object.keys(selector.filter ?? {}).length === 0) {
      throw new AgentqError(
        'INVALID_INPUT',
        'vector store: delete {filter} needs at least one condition; use deleteCollection to remove everything',
      );
    }
    const where = payloadFilterSql(selector.filter, 'payload');
    this.write(() =>
      this.statement(`delete from chunks where tenant = ? and collection = ? and ${where.sql}`).run(
        tenant,
        collection,
        ...where.params,
      ),
    );
  }

  async count(tenant: string, options: { collection?: string; filter?: PayloadFilter } = {}): Promise<number> {
    checkTenant(tenant);
    if (options.collection !== undefined) checkCollection(options.collection);
    checkFilter(options.filter);
    const where = payloadFilterSql(options.filter, 'payload');
    const collectionSql = options.collection === undefined ? '' : ' and collection = ?';
    const row = this.statement(
      `select count(*) as count from chunks where tenant = ?${collectionSql} and ${where.sql}`,
    ).get(tenant, ...(options.collection === undefined ? [] : [options.collection]), ...where.params) as {
      count: number;
    };
    return row.count;
  }

  async query(tenant: string, query: VectorQuery): Promise<VectorHit[]> {
    checkTenant(tenant);
    const { limit } = checkQuery(query);
    // Each side fetches more than `limit` when both are fused, so that an item ranked lower on one side can still rise.
    const candidates =
      query.text !== undefined && query.vector !== undefined ? Math.min(1000, Math.max(limit * 4, 50)) : limit;
    const lists: Hit[][] = [];
    if (query.text !== undefined) lists.push(this.lexical(tenant, query, query.text, candidates));
    if (query.vector !== undefined) lists.push(this.dense(tenant, query, query.vector, candidates));
    if (lists.length === 1) {
      // One side: its score is the BM25 or the cosine similarity itself.
      const side = query.text !== undefined ? 'lexicalScore' : 'similarity';
      return lists[0]!
        .slice(0, limit)
        .map(({ id, collection, score, text, payload }) => ({ id, collection, score, [side]: score, text, payload }));
    }
    // A chunk whose vector is still being added counts its lexical standing on the dense side too (fuseHybrid).
    return fuse(lists[0]!, lists[1]!, query.fusion, (hit) => hit.withoutVector === true)
      .slice(0, limit)
      .map(({ id, collection, score, lexicalScore, similarity, text, payload }) => ({
        id,
        collection,
        score,
        ...(lexicalScore === undefined ? {} : { lexicalScore }),
        ...(similarity === undefined ? {} : { similarity }),
        text,
        payload,
      }));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private lexical(tenant: string, query: VectorQuery, text: string, limit: number): Hit[] {
    const match = toFtsQuery(text);
    if (match === null) return [];
    const where = payloadFilterSql(query.filter, 'c.payload');
    const collectionSql = query.collection === undefined ? '' : ' and c.collection = ?';
    // bm25() is lower-is-better (negative); negated so that higher is better like every other score.
    const rows = this.statement(
      `select c.rowid, c.id, c.collection, c.text, c.payload, c.dimensions, -bm25(chunks_fts, ?, 1.0) as score
       from chunks_fts join chunks c on c.rowid = chunks_fts.rowid
       where chunks_fts match ? and c.tenant = ?${collectionSql} and ${where.sql}
       order by score desc limit ?`,
    ).all(
      this.contextWeight,
      match,
      tenant,
      ...(query.collection === undefined ? [] : [query.collection]),
      ...where.params,
      limit,
    ) as (ChunkRow & { score: number })[];
    return rows.map((row) => toHit(row, row.score));
  }

  private dense(tenant: string, query: VectorQuery, vector: readonly number[], limit: number): Hit[] {
    const dimensions = vector.length;
    const table = vectorTable(dimensions);
    const exists = this.statement("select 1 from sqlite_master where type = 'table' and name = ?").get(table);
    if (!exists) return [];
    // A zero query has no direction (sqlite-vec gives every record a NaN distance): nothing is near it.
    if (!vector.some((value) => value !== 0)) return [];
    if (this.cache && query.collection !== undefined) {
      // With a payload filter, the matching records' rowids (an indexed lookup), then only those are scored.
      const among = hasFilter(query)
        ? this.matchingRowids(tenant, query.collection, dimensions, query.filter)
        : undefined;
      const neighbours = this.cache.nearest(tenant, query.collection, vector, limit, among);
      if (neighbours) return this.neighbourHits(neighbours);
    }
    const { sql, params } = denseSql(tenant, query, table, dimensions, new Float32Array(vector), limit);
    const rows = this.statement(
      `select c.rowid, c.id, c.collection, c.text, c.payload, knn.distance from (${sql}) knn join chunks c on c.rowid = knn.rowid order by knn.distance`,
    ).all(...params) as (ChunkRow & { distance: number | null })[];
    // Cosine distance is 1 - similarity: report the similarity, higher is better. A zero vector's distance is NaN (null here): near nothing.
    return rows.flatMap((row) => (row.distance === null ? [] : [toHit(row, 1 - row.distance)]));
  }

  private matchingRowids(
    tenant: string,
    collection: string,
    dimensions: number,
    filter: PayloadFilter | undefined,
  ): number[] {
    const where = payloadFilterSql(filter, 'payload');
    const rows = this.statement(
      `select rowid from chunks where tenant = ? and collection = ? and dimensions = ? and ${where.sql}`,
    ).all(tenant, collection, dimensions, ...where.params) as { rowid: number }[];
    return rows.map((row) => row.rowid);
  }

  /** The records of these neighbours, in their order. */
  private neighbourHits(neighbours: readonly DenseNeighbour[]): Hit[] {
    if (neighbours.length === 0) return [];
    const rows = this.statement(
      'select rowid, id, collection, text, payload from chunks where rowid in (select value from json_each(?))',
    ).all(JSON.stringify(neighbours.map((neighbour) => neighbour.rowid))) as ChunkRow[];
    const byRowid = new Map(rows.map((row) => [row.rowid, row]));
    return neighbours.flatMap((neighbour) => {
      const row = byRowid.get(neighbour.rowid);
      return row ? [toHit(row, neighbour.similarity)] : [];
    });
  }

  /** One BEGIN IMMEDIATE transaction: the write lock is taken up front, so two writers never deadlock upgrading. */
  private write<T>(action: () => T): T {
    try {
      return this.db.transaction(action).immediate();
    } catch (error) {
      throw sqliteWriteError(error, this.db.name);
    }
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
