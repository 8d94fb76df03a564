import type { RedisConnection } from '../redis/connect-redis.js';
import type { Keys } from './keys.js';
import { KeyedSlots } from './slots/keyed-slots.js';

/** Every turn ahead is named to the one waiting (its onBusy may cancel them all); a conversation holds few. */
const SHOW_AHEAD = 1000;

/** A conversation's turn as the rule needs it. */
interface ConversationTurn {
  id: string;
  tenant: string;
  conversationId: string;
  createdAt: number;
}

/**
 * One turn at a time per conversation: a conversation is a key of one slot (KeyedSlots, limit 1) whose
 * line is its unfinished turns by creation time. A run is registered as it is created, and only the
 * first may be taken in; a turn leaves when it finishes (the run store's onFinished hook), which hands the
 * conversation to the next one. Every decision is one script on that one key, so two turns enqueued at
 * once, taken in by two workers at once, still run one after the other, in the order they were created.
 * A turn not registered yet (a raw job's, or one whose registration a crash lost) joins the waiting turns
 * at its creation time: the turn that holds the conversation keeps it.
 */
export class ConversationTurns {
  private readonly slots: KeyedSlots;

  constructor(
    redis: RedisConnection,
    private readonly keys: Keys,
    /** How long an idle conversation's turn list outlives its last change, seconds. */
    private readonly ttlSeconds: number,
  ) {
    this.slots = new KeyedSlots(redis);
  }

  /** The commands that register a new turn (sent in the pipeline that creates its run). */
  registration(turn: ConversationTurn): { key: string; score: number; ttlSeconds: number } {
    return { key: this.keyOf(turn), score: turn.createdAt, ttlSeconds: this.ttlSeconds };
  }

  /** → the unfinished turns ahead of `turn` (registering it if it is not yet); empty: it may run now. */
  async ahead(turn: ConversationTurn): Promise<string[]> {
    const verdict = await this.slots.wait({
      key: this.keyOf(turn),
      runId: turn.id,
      createdAt: turn.createdAt,
      limit: 1,
      ttlSeconds: this.ttlSeconds,
      showAhead: SHOW_AHEAD,
    });
    return verdict.holds ? [] : verdict.ahead;
  }

  /** Removes a finished (or refused) turn; → the turn that may run now when this one was first, else null. */
  async leave(tenant: string, conversationId: string, runId: string): Promise<string | null> {
    return this.slots.leave(this.keys.conversationTurns(tenant, conversationId), runId, 1);
  }

  /** The unfinished turns, first first, with their creation times. */
  async list(tenant: string, conversationId: string): Promise<{ runId: string; createdAt: number }[]> {
    const members = await this.slots.list(this.keys.conversationTurns(tenant, conversationId));
    return members.map(({ runId, at }) => ({ runId, createdAt: at }));
  }

  private keyOf(turn: ConversationTurn): string {
    return this.keys.conversationTurns(turn.tenant, turn.conversationId);
  }
}
