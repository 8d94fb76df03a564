import { AgentqError } from './errors.js';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A `since` filter as a time (ms since the epoch): a duration back from `now` (`90s`, `30m`, `1h`, `7d`)
 * or an ISO 8601 time (`2026-11-28T00:00:00Z`). Anything else is INVALID_INPUT saying what is taken;
 * `field` names the filter it came in (an `until` bound is read the same way).
 */
export function parseSince(text: string, now = Date.now(), field = 'since'): number {
  const duration = /^(\d{1,9})([smhd])$/.exec(text.trim());
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]!]!;
  const time = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isNaN(time)) return time;
  throw new AgentqError(
    'INVALID_INPUT',
    `${field} '${text}' is neither a duration (like 30m, 1h, 7d) nor an ISO 8601 time (like 2026-11-28T00:00:00Z)`,
  );
}
