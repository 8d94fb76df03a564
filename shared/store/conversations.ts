import type { Message, RunStatus } from '../contracts/run-record.js';
import type { RedisRunStore } from './redis-run-store.js';

/** One turn of a conversation: a run enqueued with its id. */
export interface ConversationTurnRecord {
  runId: string;
  status: RunStatus;
  createdAt: string;
}

/** A conversation as `GET /v1/conversations/:id` and `client.conversation(id)` show it. */
export interface ConversationRecord {
  id: string;
  tenant: string;
  /** Its turns, oldest first (the latest MAX_TURNS; expired runs left out). */
  turns: ConversationTurnRecord[];
  /** The turns not yet finished, first first: the first runs, the others wait (onBusy). */
  activeRunIds: string[];
  /** The run a next turn continues (the latest completed one); null when none completed yet. */
  latestCompletedRunId: string | null;
  /** That run's history: what the conversation remembers (the next turn starts from it); [] without one. */
  messages: Message[];
}

/** Turns a conversation record lists at most (the newest). */
const MAX_TURNS = 100;

/**
 * Reading and clearing a conversation by id, scoped to a tenant: every key is the tenant's own, so another
 * tenant's conversation with the same id is simply not there (a foreign id reads as a missing one).
 */
export class Conversations {
  constructor(private readonly store: Pick<RedisRunStore, 'redis' | 'keys' | 'reads'>) {}

  /** → the conversation, or null when the tenant has none with this id (never started, cleared or expired). */
  async get(tenant: string, conversationId: string): Promise<ConversationRecord | null> {
    const { redis, keys } = this.store;
    const [runIds, open] = await Promise.all([
      redis.zrevrange(keys.conversation(tenant, conversationId), 0, MAX_TURNS - 1),
      redis.zrange(keys.conversationTurns(tenant, conversationId), '0', '-1'),
    ]);
    const ids = [...new Set([...runIds, ...open])];
    if (ids.length === 0) return null;
    const metas = (await Promise.all(ids.map((runId) => this.store.reads.get(runId)))).filter(
      (meta) => meta !== null && meta.tenant === tenant,
    );
    if (metas.length === 0) return null;
    metas.sort((a, b) => a!.createdAt - b!.createdAt || a!.id.localeCompare(b!.id));
    const turns = metas.map((meta) => ({
      runId: meta!.id,
      status: meta!.status,
      createdAt: new Date(meta!.createdAt).toISOString(),
    }));
    const latest = [...metas].reverse().find((meta) => meta!.status === 'completed' && runIds.includes(meta!.id));
    return {
      id: conversationId,
      tenant,
      turns,
      activeRunIds: open.filter((runId) => metas.some((meta) => meta!.id === runId)),
      latestCompletedRunId: latest?.id ?? null,
      messages: latest ? await this.store.reads.messages(latest.id) : [],
    };
  }

  /**
   * Forgets what the conversation remembers: its next turn starts from an empty history. Its runs stay
   * (each until its retention ends, or purge it); unfinished turns go on, in order. → false when the
   * tenant has no conversation with this id.
   */
  async clear(tenant: string, conversationId: string): Promise<boolean> {
    const { redis, keys } = this.store;
    const [removed, open] = await Promise.all([
      redis.del(keys.conversation(tenant, conversationId)),
      redis.zcard(keys.conversationTurns(tenant, conversationId)),
    ]);
    return removed > 0 || open > 0;
  }
}
