import type { RedisConnection } from '../redis/connect-redis.js';
import { runScript } from '../redis/create-redis.js';
import type { Keys } from './keys.js';
import { luaScript } from '../redis/lua-script.js';

/**
 * KEYS: 1 the conversation's turns · ARGV: 1 runId, 2 its createdAt, 3 ttl seconds
 * → the turns ahead of runId, first first (empty: runId is the conversation's first unfinished turn).
 * A turn not registered yet (a raw job's, or one whose registration a crash lost) joins at its creation time.
 */
const ENTER = luaScript(new URL('./lua/enter-conversation-turn-1.lua', import.meta.url));

/**
 * KEYS: 1 the conversation's turns · ARGV: 1 runId
 * → the turn that is first now, when runId was first and another waits; false otherwise (also when runId
 * had left already, so of two callers leaving the same turn only one hands the conversation on).
 */
const LEAVE = luaScript(new URL('./lua/leave-conversation-turn-1.lua', import.meta.url));

/** A conversation's turn as the rule needs it. */
interface ConversationTurn {
  id: string;
  tenant: string;
  conversationId: string;
  createdAt: number;
}

/**
 * One turn at a time per conversation: the conversation's unfinished turns are one sorted set
 * by creation time. A run is registered as it is created, and only the first of the set may be taken in;
 * a turn leaves the set when it finishes (the run store's onFinished hook), which hands the conversation to
 * the next one. Every decision is one script on that one key, so two turns enqueued at once, taken in by
 * two workers at once, still run one after the other, in the order they were created.
 */
export class ConversationTurns {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** How long an idle conversation's turn list outlives its last change, seconds. */
    private readonly ttlSeconds: number,
  ) {}

  /** The commands that register a new turn (sent in the pipeline that creates its run). */
  registration(turn: ConversationTurn): { key: string; score: number; ttlSeconds: number } {
    return { key: this.keyOf(turn), score: turn.createdAt, ttlSeconds: this.ttlSeconds };
  }

  /** → the unfinished turns ahead of `turn` (registering it if it is not yet); empty: it may run now. */
  async ahead(turn: ConversationTurn): Promise<string[]> {
    return runScript<string[]>(this.redis, ENTER, [this.keyOf(turn)], [turn.id, turn.createdAt, this.ttlSeconds]);
  }

  /** Removes a finished (or refused) turn; → the turn that may run now when this one was first, else null. */
  async leave(tenant: string, conversationId: string, runId: string): Promise<string | null> {
    const next = await runScript<string | null>(
      this.redis,
      LEAVE,
      [this.keys.conversationTurns(tenant, conversationId)],
      [runId],
    );
    return next || null;
  }

  /** The unfinished turns, first first, with their creation times. */
  async list(tenant: string, conversationId: string): Promise<{ runId: string; createdAt: number }[]> {
    const flat = await this.redis.zrange(this.keys.conversationTurns(tenant, conversationId), '0', '-1', 'WITHSCORES');
    const turns: { runId: string; createdAt: number }[] = [];
    for (let index = 0; index < flat.length; index += 2)
      turns.push({ runId: flat[index]!, createdAt: Number(flat[index + 1]) });
    return turns;
  }

  private keyOf(turn: ConversationTurn): string {
    return this.keys.conversationTurns(turn.tenant, turn.conversationId);
  }
}
