import type { PayloadFilter, PayloadMatch, PayloadScalar } from '../../ports/vector-store.js';

/** One condition of a Qdrant filter (a field condition, `has_id`, `is_empty`, or a nested filter). */
export type QdrantCondition = Readonly<Record<string, unknown>>;

/** A Qdrant filter: every `must` holds, no `must_not` does (the tenant is always one of the `must`: a tenant sees only its own documents). */
export interface QdrantFilter {
  must: QdrantCondition[];
  must_not?: QdrantCondition[];
}

/** Payload key under which a record's own payload is stored, so its fields never clash with ours. */
const RECORD_PAYLOAD_KEY = 'payload';

/** Equality on one of our own keyword fields (`tenant`, `collection`). */
export function keywordCondition(key: string, value: string): QdrantCondition {
  return { key, match: { value } };
}

/** Equality with one scalar: `match` for strings, booleans and integers; floats have no `match`, a closed range says the same. */
function equals(key: string, value: PayloadScalar): QdrantCondition {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return { key, range: { gte: value, lte: value } };
  return { key, match: { value } };
}

/** Any of the values: `match.any` when they are all strings or all integers (indexed, one condition), else `should`. */
function equalsAny(key: string, values: readonly PayloadScalar[]): QdrantCondition {
  if (
    values.every((value) => typeof value === 'string') ||
    values.every((value) => typeof value === 'number' && Number.isSafeInteger(value))
  ) {
    return { key, match: { any: [...values] } };
  }
  return { should: values.map((value) => equals(key, value)) };
}

function condition(key: string, match: PayloadMatch): QdrantCondition | 'never' {
  if (typeof match !== 'object') return equals(key, match);
  if ('in' in match) return match.in.length === 0 ? 'never' : equalsAny(key, match.in);
  // "A record without the field matches none of the three": is_empty (missing, null or []) excludes it,
  // which a bare must_not on the values would not.
  return { must_not: [{ is_empty: { key } }, ...match.notIn.map((value) => equals(key, value))] };
}

/**
 * The Qdrant conditions for a port `PayloadFilter` (already checked), on the record payload stored under
 * {@link RECORD_PAYLOAD_KEY}; `'never'` when no record can match (`{in: []}`), so callers answer
 * empty without asking Qdrant. Qdrant's match is type-strict, like the embedded store: `'1'` does not match `1`.
 */
export function recordFilterConditions(filter: PayloadFilter | undefined): QdrantCondition[] | 'never' {
  const conditions: QdrantCondition[] = [];
  for (const [field, match] of Object.entries(filter ?? {})) {
    const translated = condition(`${RECORD_PAYLOAD_KEY}.${field}`, match);
    if (translated === 'never') return 'never';
    conditions.push(translated);
  }
  return conditions;
}
