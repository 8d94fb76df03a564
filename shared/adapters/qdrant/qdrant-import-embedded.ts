import { existsSync } from 'node:fs';
import type { Statement } from 'better-sqlite3';
import { AgentqError } from '../../contracts/errors.js';
import { sqliteModules } from '../sqlite/sqlite-modules.js';
import type { Payload, VectorRecord, VectorStore } from '../../ports/vector-store.js';

export interface ImportEmbeddedStoreOptions {
  /** The embedded store's file, `<AGENTQ_DATA_DIR>/vectors.sqlite`. Opened read-only. */
  sourcePath: string;
  /** Where the records go: a QdrantVectorStore (any VectorStore works). */
  target: VectorStore;
  /** Only this tenant. @default every tenant */
  tenant?: string;
  /** Only this collection. @default every collection */
  collection?: string;
  /** Records per `upsert` call. @default 256 */
  batchSize?: number;
  /** Called after each batch with the records copied so far. */
  onProgress?: (copied: number) => void;
}

interface ChunkRow {
  rowid: number;
  tenant: string;
  collection: string;
  id: string;
  text: string;
  context: string;
  payload: string;
  dimensions: number | null;
}

/**
 * Copies the embedded store's collections and records — text, context, payload and dense vectors as
 * they are, no re-embedding — into another store: the move from the embedded store to Qdrant
 * (`agentq reindex`). Re-running it is safe: records keep their ids, so they are replaced, not doubled.
 *
 * Ingesting again would not do this: documents whose bytes did not change are skipped as `unchanged`.
 * Reads the embedded store's tables directly (shared/adapters/sqlite/sqlite-schema.ts: `collections`,
 * `chunks`, `vec_d<length>`), one collection at a time, in rowid order, so memory stays at one batch.
 */
export async function importEmbeddedStore({
  sourcePath,
  target,
  tenant,
  collection,
  batchSize = 256,
  onProgress,
}: ImportEmbeddedStoreOptions): Promise<{ collections: number; records: number }> {
  if (!existsSync(sourcePath))
    throw new AgentqError(
      'NOT_FOUND',
      `no embedded vector store at ${sourcePath}; set AGENTQ_DATA_DIR to the folder that holds vectors.sqlite`,
    );
  const { Database, sqliteVec } = sqliteModules();
  const db = new Database(sourcePath, { readonly: true, fileMustExist: true });
  try {
    sqliteVec.load(db);
    const where = [tenant === undefined ? '' : 'tenant = @tenant', collection === undefined ? '' : 'name = @collection']
      .filter(Boolean)
      .join(' and ');
    const collections = db
      .prepare(
        `select tenant, name, dimensions from collections${where ? ` where ${where}` : ''} order by tenant, name`,
      )
      .all({ ...(tenant === undefined ? {} : { tenant }), ...(collection === undefined ? {} : { collection }) }) as {
      tenant: string;
      name: string;
      dimensions: number | null;
    }[];
    const page = db.prepare(
      'select rowid, tenant, collection, id, text, context, payload, dimensions from chunks where tenant = ? and collection = ? and rowid > ? order by rowid limit ?',
    );
    const vectorStatements = new Map<number, Statement>();
    const vectorOf = (row: ChunkRow): number[] | undefined => {
      if (row.dimensions === null) return undefined;
      let statement = vectorStatements.get(row.dimensions);
      if (!statement)
        vectorStatements.set(
          row.dimensions,
          (statement = db.prepare(`select embedding from vec_d${row.dimensions} where rowid = ?`)),
        );
      const found = statement.get(BigInt(row.rowid)) as { embedding: Buffer } | undefined;
      return found
        ? Array.from(
            new Float32Array(found.embedding.buffer, found.embedding.byteOffset, found.embedding.byteLength / 4),
          )
        : undefined;
    };
    let records = 0;
    for (const entry of collections) {
      await target.ensureCollection(
        entry.tenant,
        entry.name,
        entry.dimensions === null ? {} : { dimensions: entry.dimensions },
      );
      for (let after = 0; ;) {
        const rows = page.all(entry.tenant, entry.name, after, batchSize) as ChunkRow[];
        if (rows.length === 0) break;
        const batch: VectorRecord[] = rows.map((row) => {
          const vector = vectorOf(row);
          return {
            id: row.id,
            text: row.text,
            context: row.context,
            payload: JSON.parse(row.payload) as Payload,
            ...(vector ? { vector } : {}),
          };
        });
        await target.upsert(entry.tenant, entry.name, batch);
        records += batch.length;
        onProgress?.(records);
        after = rows.at(-1)!.rowid;
      }
    }
    return { collections: collections.length, records };
  } finally {
    db.close();
  }
}
