import type { VectorQuery } from '../../ports/vector-store.js';
import { payloadFilterSql } from './payload-filter-sql.js';
import { hasFilter } from './sqlite-hit.js';

/** sqlite-vec's query for the `limit` nearest records: `rowid` and `distance` (cosine), nearest first. */
export function denseSql(
  tenant: string,
  query: VectorQuery,
  table: string,
  dimensions: number,
  bytes: Float32Array,
  limit: number,
): { sql: string; params: unknown[] } {
  const collectionArgs = query.collection === undefined ? [] : [query.collection];
  if (!hasFilter(query)) {
    // k-nearest neighbours inside the tenant's partition (vec0 answers the tenant filter itself).
    return {
      sql: `select rowid, distance from ${table} where embedding match ? and k = ? and tenant = ?${query.collection === undefined ? '' : ' and collection = ?'} order by distance`,
      params: [bytes, limit, tenant, ...collectionArgs],
    };
  }
  // With a payload filter the k nearest might all be filtered out: measure every matching record instead.
  const where = payloadFilterSql(query.filter, 'c.payload');
  return {
    sql: `select c.rowid as rowid, vec_distance_cosine(v.embedding, ?) as distance
       from chunks c join ${table} v on v.rowid = c.rowid
       where c.tenant = ? and c.dimensions = ?${query.collection === undefined ? '' : ' and c.collection = ?'} and ${where.sql}
       order by distance limit ?`,
    params: [bytes, tenant, dimensions, ...collectionArgs, ...where.params, limit],
  };
}
