import { AgentqError } from '../contracts/errors.js';
import { luaScript } from '../redis/lua-script.js';
import { RUN_LUA_VALUES } from './run-scripts.js';
import type { RunStoreContext } from './run-store-context.js';

/** A stretch of history a later turn shares with an earlier one: the first `count` messages that run stores. */
export type HistorySegment = [runId: string, count: number];

/** The meta field listing the segments a turn's history starts with (JSON), before the messages it stores. */
export const HISTORY_OF_FIELD = 'historyOf';
/** The meta field listing the later turns whose history shares this run's stored messages (JSON ids). */
const CONTINUED_BY_FIELD = 'continuedBy';

/** Its KEYS, ARGV and reply: the header of lua/share-history-8.lua. */
const SHARE_HISTORY = luaScript(new URL('./lua/share-history-8.lua', import.meta.url), RUN_LUA_VALUES);

/** A meta field's segments ([] when absent or malformed). */
export function parseSegments(value: string | null | undefined): HistorySegment[] {
  if (!value) return [];
  const parsed: unknown = JSON.parse(value);
  return Array.isArray(parsed)
    ? parsed.filter((item): item is HistorySegment => Array.isArray(item) && typeof item[0] === 'string')
    : [];
}

/**
 * A conversation's history stored once: a turn that starts from the previous turn's whole history stores
 * only its own messages, and its meta lists the earlier turns' stretches its history starts with
 * (`historyOf`). Readers assemble the history from those stretches and the run's own list, so every
 * response shows the whole history while each turn keeps, and is charged for, only what it added.
 *
 * Retention: taking such a turn in keeps the earlier turns it shares for twice the retention period (all
 * their keys and their ledger entries: the shared bytes stay charged while they stay stored), its end
 * for at least the retention period from then (as long as the turn itself is kept), and a run
 * whose messages a later turn still shares cannot be purged (CONFLICT): purge the later turns first.
 */
export class SharedHistory {
  constructor(private readonly context: RunStoreContext) {}

  /** The segments `runId`'s history starts with ([]: it stores all its messages). */
  async segmentsOf(runId: string): Promise<HistorySegment[]> {
    return parseSegments(await this.context.redis.hget(this.context.keys.run(runId).meta, HISTORY_OF_FIELD));
  }

  /**
   * Items `start`..`stop` (inclusive, positions in the whole history; `stop` -1: to the end) of a history
   * that starts with `segments` and goes on with `runId`'s own list, as stored (JSON).
   */
  async range(runId: string, segments: readonly HistorySegment[], start: number, stop: number): Promise<string[]> {
    const { redis, keys } = this.context;
    const end = stop < 0 ? Infinity : stop;
    const parts: Promise<string[]>[] = [];
    let offset = 0;
    for (const [id, count] of segments) {
      const from = Math.max(start, offset);
      const to = Math.min(end, offset + count - 1);
      if (from <= to) parts.push(redis.lrange(keys.run(id).messages, from - offset, to - offset));
      offset += count;
    }
    const from = Math.max(start, offset);
    if (from <= end) parts.push(redis.lrange(keys.run(runId).messages, from - offset, stop < 0 ? -1 : stop - offset));
    return (await Promise.all(parts)).flat();
  }

  /**
   * Makes `runId`'s history start with `segments` (before its admission, so a run taken in always has
   * them; a second intake writes the same), and keeps the earlier turns alive and unpurgeable for it.
   */
  async share(runId: string, segments: readonly HistorySegment[]): Promise<void> {
    const keep = this.context.retentionSeconds * 2;
    await this.context.script<number>(SHARE_HISTORY, runId, [HISTORY_OF_FIELD, JSON.stringify(segments), '']);
    for (const [earlier] of segments) {
      const later = await this.continuedBy(earlier);
      const value = JSON.stringify(later.includes(runId) ? later : [...later, runId]);
      await this.context.script<number>(SHARE_HISTORY, earlier, [CONTINUED_BY_FIELD, value, keep]);
    }
  }

  /**
   * A turn that ended (its keys now expire after the retention period): the earlier turns it refers to are
   * kept at least as long, however long it ran.
   */
  async keepEarlier(runId: string): Promise<void> {
    for (const [earlier] of await this.segmentsOf(runId)) {
      const later = JSON.stringify(await this.continuedBy(earlier));
      await this.context.script<number>(SHARE_HISTORY, earlier, [
        CONTINUED_BY_FIELD,
        later,
        this.context.retentionSeconds,
      ]);
    }
  }

  /** Refuses (CONFLICT) to purge a run whose stored messages a later turn that still exists shares. */
  async assertPurgeable(runId: string): Promise<void> {
    const later = await this.continuedBy(runId);
    if (later.length === 0) return;
    const exists = await Promise.all(later.map((id) => this.context.redis.exists(this.context.keys.run(id).meta)));
    const sharing = later.filter((_id, index) => exists[index] === 1);
    if (sharing.length > 0)
      throw new AgentqError(
        'CONFLICT',
        `run ${runId} cannot be purged: the history of the later conversation turns ${sharing.join(', ')} starts with its messages (stored once); purge those first`,
      );
  }

  private async continuedBy(runId: string): Promise<string[]> {
    const value = await this.context.redis.hget(this.context.keys.run(runId).meta, CONTINUED_BY_FIELD);
    return value ? (JSON.parse(value) as string[]) : [];
  }
}
