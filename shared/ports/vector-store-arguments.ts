import { AgentqError } from '../contracts/errors.js';
import { ID_PATTERN } from '../contracts/ids.js';
import type { PayloadFilter, VectorQuery, VectorRecord, VectorUpdate } from './vector-store.js';

/**
 * Argument checks every VectorStore adapter runs first, so all of them refuse the same inputs with the
 * same messages (the contract suite holds them to it).
 */

const DEFAULT_QUERY_LIMIT = 10;
export const MAX_QUERY_LIMIT = 1000;
/** Longer vectors than any embedding model produces are a mistake (or an attack on memory). */
const MAX_VECTOR_LENGTH = 8192;
const FIELD_PATTERN = /^[A-Za-z0-9_]{1,64}$/;

/** Throws unless `tenant` is a tenant id: the tenant is never optional and never "all". */
export function checkTenant(tenant: unknown): asserts tenant is string {
  if (typeof tenant !== 'string' || !ID_PATTERN.test(tenant)) {
    throw new AgentqError(
      'INVALID_INPUT',
      `vector store: tenant must be 1-128 characters of letters, digits, '_', '.' or '-', got ${JSON.stringify(tenant)}; every call names its tenant`,
    );
  }
}

export function checkCollection(collection: unknown): asserts collection is string {
  if (typeof collection !== 'string' || !ID_PATTERN.test(collection)) {
    throw new AgentqError(
      'INVALID_INPUT',
      `vector store: collection must be 1-128 characters of letters, digits, '_', '.' or '-', got ${JSON.stringify(collection)}`,
    );
  }
}

/** The arguments of `ensureCollection`; → the fixed vector length, or null when none is asked for. */
export function checkEnsureCollection(
  tenant: unknown,
  collection: unknown,
  dimensions: number | undefined,
): number | null {
  checkTenant(tenant);
  checkCollection(collection);
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || dimensions < 1)) {
    throw new AgentqError('INVALID_INPUT', `vector store: dimensions must be a positive integer, got ${dimensions}`);
  }
  return dimensions ?? null;
}

export function checkFilter(filter: PayloadFilter | undefined): void {
  if (filter === undefined) return;
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw new AgentqError(
      'INVALID_INPUT',
      'vector store: filter must be an object of payload field → value, {in: [...]} or {notIn: [...]}',
    );
  }
  for (const [field, match] of Object.entries(filter)) {
    if (!FIELD_PATTERN.test(field))
      throw new AgentqError(
        'INVALID_INPUT',
        `vector store: filter field '${field}' must be 1-64 characters of letters, digits or '_'`,
      );
    const values =
      typeof match === 'object' && match !== null
        ? 'in' in match
          ? match.in
          : 'notIn' in match
            ? match.notIn
            : undefined
        : [match];
    if (!Array.isArray(values) || values.some((value) => !['string', 'number', 'boolean'].includes(typeof value))) {
      throw new AgentqError(
        'INVALID_INPUT',
        `vector store: filter field '${field}' must match a string, number or boolean, or {in: [...]} / {notIn: [...]} of them`,
      );
    }
  }
}

function checkVector(vector: readonly number[], what: string): void {
  if (
    !Array.isArray(vector) ||
    vector.length === 0 ||
    vector.length > MAX_VECTOR_LENGTH ||
    !vector.every((value) => Number.isFinite(value))
  ) {
    throw new AgentqError('INVALID_INPUT', `vector store: ${what} must be 1-${MAX_VECTOR_LENGTH} finite numbers`);
  }
}

/** Checks records before anything is written; returns the length of their vectors (null when none has one). */
export function checkRecords(records: readonly VectorRecord[]): number | null {
  if (!Array.isArray(records)) throw new AgentqError('INVALID_INPUT', 'vector store: upsert takes an array of records');
  let dimensions: number | null = null;
  const ids = new Set<string>();
  for (const record of records) {
    if (typeof record?.id !== 'string' || record.id.length === 0 || record.id.length > 512) {
      throw new AgentqError(
        'INVALID_INPUT',
        `vector store: a record id must be a string of 1-512 characters, got ${JSON.stringify(record?.id)}`,
      );
    }
    if (ids.has(record.id))
      throw new AgentqError('INVALID_INPUT', `vector store: record id '${record.id}' appears twice in one upsert`);
    ids.add(record.id);
    if (typeof record.text !== 'string')
      throw new AgentqError(
        'INVALID_INPUT',
        `vector store: record '${record.id}' has no text (a string, may be empty)`,
      );
    if (record.vector !== undefined) {
      checkVector(record.vector, `the vector of record '${record.id}'`);
      if (dimensions !== null && record.vector.length !== dimensions) {
        throw new AgentqError(
          'INVALID_INPUT',
          `vector store: record '${record.id}' has a vector of length ${record.vector.length}, others in this upsert have ${dimensions}`,
        );
      }
      dimensions = record.vector.length;
    }
  }
  return dimensions;
}

/** The updates of `setVectors` (each with an id, its text and a vector, all of one length); → that length, null when there are none. */
export function checkVectorUpdates(updates: readonly VectorUpdate[]): number | null {
  if (!Array.isArray(updates))
    throw new AgentqError('INVALID_INPUT', 'vector store: setVectors takes an array of {id, text, vector}');
  for (const update of updates)
    if (update?.vector === undefined)
      throw new AgentqError(
        'INVALID_INPUT',
        `vector store: setVectors needs a vector for every record, '${String(update?.id)}' has none`,
      );
  return checkRecords(updates);
}

/** `pendingVectors`' limit: a positive integer up to MAX_QUERY_LIMIT. */
export function checkPendingLimit(limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_QUERY_LIMIT)
    throw new AgentqError(
      'INVALID_INPUT',
      `vector store: pendingVectors' limit must be an integer from 1 to ${MAX_QUERY_LIMIT}, got ${String(limit)}`,
    );
  return limit;
}

/** The query's limit, defaults filled in, after checking the rest of it. */
export function checkQuery(query: VectorQuery): { limit: number } {
  if (typeof query !== 'object' || query === null)
    throw new AgentqError('INVALID_INPUT', 'vector store: query must be an object');
  if (query.collection !== undefined) checkCollection(query.collection);
  if (query.text === undefined && query.vector === undefined) {
    throw new AgentqError('INVALID_INPUT', 'vector store: a query needs text, a vector or both');
  }
  if (query.text !== undefined && typeof query.text !== 'string')
    throw new AgentqError('INVALID_INPUT', 'vector store: query text must be a string');
  if (query.vector !== undefined) checkVector(query.vector, 'the query vector');
  checkFilter(query.filter);
  checkFusion(query.fusion);
  const limit = query.limit ?? DEFAULT_QUERY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_QUERY_LIMIT) {
    throw new AgentqError(
      'INVALID_INPUT',
      `vector store: limit must be an integer from 1 to ${MAX_QUERY_LIMIT}, got ${JSON.stringify(query.limit)}`,
    );
  }
  return { limit };
}

function checkFusion(fusion: VectorQuery['fusion']): void {
  if (fusion === undefined || fusion.method === 'rrf') return;
  if (
    fusion.method !== 'scores' ||
    !(typeof fusion.denseWeight === 'number' && Number.isFinite(fusion.denseWeight) && fusion.denseWeight >= 0)
  ) {
    throw new AgentqError(
      'INVALID_INPUT',
      `vector store: fusion must be {method: 'rrf'} or {method: 'scores', denseWeight: a number ≥ 0}, got ${JSON.stringify(fusion)}`,
    );
  }
}
