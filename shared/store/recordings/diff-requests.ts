/** One difference between a recorded request and a replayed one: where, and the two values there. */
export interface RequestDifference {
  /** A JSON path, e.g. `messages[0].content`, `tools`, `model`. */
  path: string;
  /** The recorded value (absent: the recorded request had nothing there). */
  recorded?: unknown;
  /** The replayed value (absent: the replayed request has nothing there). */
  replayed?: unknown;
}

interface DiffOptions {
  /** At most this many differences. @default 20 */
  limit?: number;
  /** Strings longer than this are cut, saying how much was left out. @default 400 */
  maxChars?: number;
}

/**
 * The differences between two JSON values, leaf by leaf (objects by key, arrays by position), first
 * ones first: what a replay reports when a step asks another question than the recorded run did.
 */
export function diffRequests(
  recorded: unknown,
  replayed: unknown,
  { limit = 20, maxChars = 400 }: DiffOptions = {},
): RequestDifference[] {
  const found: RequestDifference[] = [];
  const show = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.length > maxChars
        ? `${value.slice(0, maxChars)}…[${value.length - maxChars} more characters]`
        : value;
    if (value !== null && typeof value === 'object') {
      const json = JSON.stringify(value);
      return json.length > maxChars ? show(json) : value;
    }
    return value;
  };
  const walk = (path: string, a: unknown, b: unknown): void => {
    if (found.length >= limit) return;
    if (a === b) return;
    const bothArrays = Array.isArray(a) && Array.isArray(b);
    const bothObjects =
      !bothArrays &&
      a !== null &&
      b !== null &&
      typeof a === 'object' &&
      typeof b === 'object' &&
      !Array.isArray(a) &&
      !Array.isArray(b);
    if (bothArrays) {
      const length = Math.max(a.length, b.length);
      for (let i = 0; i < length; i += 1) walk(`${path}[${i}]`, a[i], b[i]);
      return;
    }
    if (bothObjects) {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const key of [...keys].sort())
        walk(path ? `${path}.${key}` : key, (a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]);
      return;
    }
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    found.push({
      path: path || '(request)',
      ...(a === undefined ? {} : { recorded: show(a) }),
      ...(b === undefined ? {} : { replayed: show(b) }),
    });
  };
  walk('', recorded, replayed);
  return found;
}
