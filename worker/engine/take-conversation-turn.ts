import { AgentqError } from '../../shared/contracts/errors.js';
import type { OnBusy } from '../../shared/contracts/job-schema.js';
import { isTerminal } from '../../shared/contracts/run-record.js';
import type { ConversationTurns } from '../../shared/store/conversation-turns.js';
import type { RedisRunStore, RunMeta } from '../../shared/store/redis-run-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';

/** A registered turn whose run is not there yet may be one being created right now: left alone this long. */
const MISSING_TURN_GRACE_MS = 60_000;

/** What the step-deferred event says a waiting turn did to the turns ahead, by its onBusy. */
const TURN_VERBS: Record<Exclude<OnBusy, 'reject'>, string> = {
  queue: 'waits behind',
  cancel: 'cancelled',
  interrupt: 'interrupted',
  rollback: 'rolled back',
};

/** What a conversation's turn does now: run, or wait behind `behind` (it is handed on when that one ends). */
type TurnVerdict = { kind: 'go' } | { kind: 'wait'; behind: string };

interface TakeConversationTurnOptions {
  store: RedisRunStore;
  turns: ConversationTurns;
  /** The graph's default when the run did not say. @default 'queue' */
  graphOnBusy?: OnBusy;
  logger: Logger;
  now?: number;
}

/**
 * One turn at a time per conversation, as a run is taken in. The order is decided in Redis
 * (ConversationTurns: one script on the conversation's turn list), never by reading statuses and then
 * writing: a run whose turn is not first does not start. Then the run's `onBusy` (else its graph's, else
 * 'queue') says what it does about the turns ahead: wait for them; cancel them (a running turn stops at its
 * next step boundary and keeps its last context, as any cancellation) and wait for them to end — and with
 * 'interrupt' continue from the running one, with 'rollback' drop them from the conversation; or fail with
 * CONVERSATION_BUSY. A turn ahead whose run already ended (its hand-on lost in a crash), expired or belongs to
 * another tenant leaves the list here, so a lost hand-on delays a conversation at most until its next turn.
 */
export async function takeConversationTurn(
  meta: RunMeta,
  { store, turns, graphOnBusy, logger, now = Date.now() }: TakeConversationTurnOptions,
): Promise<TurnVerdict> {
  const conversationId = meta.conversationId;
  if (!conversationId) return { kind: 'go' };
  const turn = { id: meta.id, tenant: meta.tenant, conversationId, createdAt: meta.createdAt };
  const mode = meta.onBusy ?? graphOnBusy ?? 'queue';
  for (let pass = 0; pass < 3; pass += 1) {
    const ahead = await turns.ahead(turn);
    if (ahead.length === 0) return { kind: 'go' };
    const live: string[] = [];
    for (const runId of ahead) {
      const other = await store.reads.get(runId);
      const gone = other
        ? other.tenant !== meta.tenant || isTerminal(other.status)
        : now - ((await turns.list(meta.tenant, conversationId)).find((t) => t.runId === runId)?.createdAt ?? 0) >
          MISSING_TURN_GRACE_MS;
      if (!gone) live.push(runId);
      else await turns.leave(meta.tenant, conversationId, runId);
    }
    if (live.length === 0) continue;
    const active = live[0]!;
    if (mode === 'reject') {
      await turns.leave(meta.tenant, conversationId, meta.id);
      throw new AgentqError(
        'CONVERSATION_BUSY',
        `conversation ${conversationId} is busy: its turn ${active} has not finished (onBusy "reject"); wait for it, cancel it, or send this turn with onBusy "queue" or "cancel"`,
        { details: { conversationId, activeRunId: active } },
      );
    }
    if (mode !== 'queue') {
      // Every turn ahead: the newest input wins, as in a chat where the user interrupts the answer.
      for (const runId of live) await store.lifecycle.requestCancel(runId, now);
    }
    // 'interrupt': this turn goes on from what the running turn committed (ConversationHistory).
    if (mode === 'interrupt') await store.commits.noteOnMeta(meta.id, 'continuesFrom', active, now);
    // 'rollback': the turns ahead leave the conversation, so no later turn ever sees them.
    if (mode === 'rollback') await store.redis.zrem(store.keys.conversation(meta.tenant, conversationId), ...live);
    // Said once per turn (the reconciler hands a waiting turn back to the intake now and then, as a safety
    // net for a lost hand-on); updatedAt moves, so the sweep looks again only after AGENTQ_RECONCILE_AFTER_MS.
    // Only while the run exists: a late delivery must not make an expired turn's meta again.
    const noted = await store.commits.noteOnMeta(meta.id, 'turnBehind', live.join(','), now);
    if (noted !== 1) return { kind: 'wait', behind: active };
    await store.eventLog.addEvent(meta.id, 'step-deferred', {
      reason: `conversation ${conversationId} is busy: this turn ${TURN_VERBS[mode]} ${live.join(', ')} and starts when ${live.length > 1 ? 'they end' : 'it ends'}`,
      conversationId,
      behind: live,
    });
    logger.debug({ runId: meta.id, conversationId, behind: live, onBusy: mode }, 'conversation turn waits');
    return { kind: 'wait', behind: active };
  }
  // Three passes each found only ended turns ahead while others kept arriving: let the next hand-on decide.
  return { kind: 'wait', behind: 'ended turns' };
}
