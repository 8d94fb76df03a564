import type { Payload, VectorHit, VectorQuery } from '../../ports/vector-store.js';

/** A chunks-table row as the store's searches select it. */
export interface ChunkRow {
  rowid: number;
  id: string;
  collection: string;
  text: string;
  payload: string;
  /** Length of the record's vector, null while it has none (selected by the lexical side only). */
  dimensions?: number | null;
}

/** A hit with its row id, which the dense and lexical sides are fused by, and whether it has a vector yet (lexical hits). */
export type Hit = VectorHit & { rowid: number; withoutVector?: boolean };

/** A hit from a row and its score. */
export function toHit(row: ChunkRow, score: number): Hit {
  return {
    rowid: row.rowid,
    id: row.id,
    collection: row.collection,
    score,
    text: row.text,
    payload: JSON.parse(row.payload) as Payload,
    ...(row.dimensions === undefined ? {} : { withoutVector: row.dimensions === null }),
  };
}

/** The query names a payload filter with at least one condition. */
export function hasFilter(query: VectorQuery): boolean {
  return query.filter !== undefined && Object.keys(query.filter).length > 0;
}
