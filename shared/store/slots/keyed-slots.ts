import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { luaScript } from '../../redis/lua-script.js';

/** KEYS and ARGV: the header of lua/enter-slots-1.lua. */
const ENTER = luaScript(new URL('./lua/enter-slots-1.lua', import.meta.url));
/** KEYS and ARGV: the header of lua/leave-slots-1.lua. */
const LEAVE = luaScript(new URL('./lua/leave-slots-1.lua', import.meta.url));

/** What a holder's score is less than its place (lua/enter-slots-1.lua): holders sort first, whatever their times. */
const HELD = 1e15;

/** What a run that asked to wait learned: it holds a slot, or waits behind `ahead` (first first). */
export type SlotTurn = { holds: true } | { holds: false; ahead: string[] };

/** What a run that asked to reserve learned: a new slot, one it held already, or none (the key is full). */
export type SlotReservation = 'new' | 'held' | 'full';

interface WaitRequest {
  /** The key's members (a sorted set the caller names through Keys). */
  key: string;
  runId: string;
  /** The run's creation time: its place in the line, unless it joins behind a later member. */
  createdAt: number;
  limit: number;
  /** How long an idle key outlives its last change. @default the key's own (none) */
  ttlSeconds?: number;
  /** At most how many members ahead to return. @default `limit` (the holders) */
  showAhead?: number;
}

/**
 * Counted slots per key, the one mechanism behind every "at most N at once" of runs: a tenant's in-flight
 * cap (TenantInflight: reserve or be refused), one turn at a time per conversation (ConversationTurns:
 * limit 1, wait in line) and concurrency keys (ConcurrencyKeys: a run's `concurrency: { key, limit }`,
 * wait in line). A key is one sorted set of its unfinished runs: at most `limit` hold a slot (marked in
 * their scores, so they sort first), the others wait by creation time. Each decision is one script on
 * that one key, so two runs asking at once, from two processes, still get the slots in order; a run leaves
 * when it finishes (the run-finished hook), which gives its slot to the first run waiting at once — in
 * Redis, so a hand-on lost on its way to the intake leaves the slot with its new holder, not with no one.
 */
export class KeyedSlots {
  constructor(private readonly redis: RedisConnection) {}

  /** Joins the line of `key` (unless in it) → whether `runId` holds a slot now. */
  async wait({ key, runId, createdAt, limit, ttlSeconds = 0, showAhead = limit }: WaitRequest): Promise<SlotTurn> {
    const [holds, ...ahead] = await runScript<[number, ...string[]]>(
      this.redis,
      ENTER,
      [key],
      [runId, createdAt, ttlSeconds, limit, 'wait', showAhead],
    );
    return holds === 1 ? { holds: true } : { holds: false, ahead };
  }

  /** Takes a free slot of `key` for `runId`, or none: no line. */
  async reserve(key: string, runId: string, limit: number): Promise<SlotReservation> {
    const [reply] = await runScript<[number]>(this.redis, ENTER, [key], [runId, 0, 0, limit, 'reserve', 0]);
    return reply === 2 ? 'held' : reply === 1 ? 'new' : 'full';
  }

  /** Removes `runId` from `key` → the run that holds a slot now in its place, if one waited; else null. */
  async leave(key: string, runId: string, limit: number): Promise<string | null> {
    return (await runScript<string | null>(this.redis, LEAVE, [key], [runId, limit])) || null;
  }

  /** The members of `key` in order (holders first), with their places (creation times, or reservation times). */
  async list(key: string): Promise<{ runId: string; at: number; holds: boolean }[]> {
    const flat = await this.redis.zrange(key, '0', '-1', 'WITHSCORES');
    const members: { runId: string; at: number; holds: boolean }[] = [];
    for (let index = 0; index < flat.length; index += 2) {
      const score = Number(flat[index + 1]);
      members.push({ runId: flat[index]!, at: score < 0 ? score + HELD : score, holds: score < 0 });
    }
    return members;
  }
}
