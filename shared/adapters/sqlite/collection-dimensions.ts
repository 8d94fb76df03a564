import type { Statement } from 'better-sqlite3';
import { AgentqError } from '../../contracts/errors.js';

/**
 * The collection's vector length after this call: creates the collection when missing, records the
 * length when it had none, and refuses a different one (`conflictCode`). `statement` is the store's
 * cache of prepared statements.
 */
export function ensureCollectionDimensions(
  statement: (sql: string) => Statement,
  tenant: string,
  collection: string,
  dimensions: number | null,
  conflictCode: 'CONFLICT' | 'INVALID_INPUT',
): void {
  const row = statement('select dimensions from collections where tenant = ? and name = ?').get(tenant, collection) as
    { dimensions: number | null } | undefined;
  if (!row) {
    statement('insert into collections (tenant, name, dimensions, created_at) values (?, ?, ?, ?)').run(
      tenant,
      collection,
      dimensions,
      Date.now(),
    );
  } else if (dimensions !== null && row.dimensions === null) {
    statement('update collections set dimensions = ? where tenant = ? and name = ?').run(
      dimensions,
      tenant,
      collection,
    );
  } else if (dimensions !== null && row.dimensions !== dimensions) {
    throw new AgentqError(
      conflictCode,
      `vector store: collection '${collection}' holds vectors of length ${row.dimensions}, not ${dimensions}; use another collection for another embedding model`,
    );
  }
}
