import type { PayloadFilter, PayloadScalar } from '../../ports/vector-store.js';

interface SqlFragment {
  /** `1` when there is nothing to filter, so it can always be AND-ed in. */
  sql: string;
  params: (string | number)[];
}

// json_extract returns 1/0 for JSON true/false.
const bindable = (value: PayloadScalar): string | number => (typeof value === 'boolean' ? (value ? 1 : 0) : value);

/**
 * A PayloadFilter (checked beforehand: field names are [A-Za-z0-9_]) as a SQL condition on a JSON
 * payload column. Values are bound, never spliced in. A record without the field matches no condition
 * on it, `notIn` included, as in Qdrant.
 */
export function payloadFilterSql(filter: PayloadFilter | undefined, column: string): SqlFragment {
  const conditions: string[] = [];
  const params: (string | number)[] = [];
  for (const [field, match] of Object.entries(filter ?? {})) {
    // The field name is part of the SQL text: checkFilter allows only these characters; make sure.
    if (!/^[A-Za-z0-9_]{1,64}$/.test(field)) throw new Error(`payload field '${field}' was not checked`);
    const value = `json_extract(${column}, '$.${field}')`;
    if (typeof match !== 'object') {
      conditions.push(`${value} = ?`);
      params.push(bindable(match));
    } else if ('in' in match) {
      conditions.push(match.in.length === 0 ? '0' : `${value} in (${match.in.map(() => '?').join(', ')})`);
      params.push(...match.in.map(bindable));
    } else {
      const excluded =
        match.notIn.length === 0 ? '' : ` and ${value} not in (${match.notIn.map(() => '?').join(', ')})`;
      conditions.push(`(${value} is not null${excluded})`);
      params.push(...match.notIn.map(bindable));
    }
  }
  return { sql: conditions.length === 0 ? '1' : conditions.join(' and '), params };
}
