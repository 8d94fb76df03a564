import { AgentqError } from '../../shared/contracts/errors.js';
import type { Concurrency } from '../../shared/contracts/job-schema.js';
import type { Graph } from '../../shared/graph/graph.js';
import type { ConversationTurns } from '../../shared/store/conversation-turns.js';
import type { RedisRunStore, RunMeta } from '../../shared/store/redis-run-store.js';
import { derivedConcurrencyKey, type ConcurrencyKeys } from '../../shared/store/slots/concurrency-keys.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { takeConcurrencySlot } from './take-concurrency-slot.js';
import { takeConversationTurn } from './take-conversation-turn.js';

interface RunGatesOptions {
  store: RedisRunStore;
  turns: ConversationTurns;
  concurrencyKeys: ConcurrencyKeys;
  logger: Logger;
}

/** Whether a run taken in may start now, and whether it is one that can have waited (its start job left behind). */
interface GatesVerdict {
  go: boolean;
  gated: boolean;
}

/**
 * The keyed slots a run passes as it is taken in, each a KeyedSlots line: its conversation's one turn at a
 * time (or CONVERSATION_BUSY, thrown), then its concurrency key's `limit` at once — the run's own key,
 * else the one its graph derives from the input (written on the run, so its end hands the slot on). A run
 * that waits holds nothing of the other: it joins its key's line only once its conversation's turn is its.
 */
export async function passRunGates(
  meta: RunMeta,
  graph: Graph,
  input: unknown,
  { store, turns, concurrencyKeys, logger }: RunGatesOptions,
): Promise<GatesVerdict> {
  const concurrency = meta.concurrency ?? (await deriveConcurrency(meta, graph, input, store));
  const gated = Boolean(meta.conversationId || concurrency);
  const turn = await takeConversationTurn(meta, {
    store,
    turns,
    ...(graph.onBusy ? { graphOnBusy: graph.onBusy } : {}),
    logger,
  });
  if (turn.kind === 'wait') return { go: false, gated };
  if (!concurrency) return { go: true, gated };
  const slot = await takeConcurrencySlot(meta, concurrency, { store, keys: concurrencyKeys, logger });
  return { go: slot.kind === 'go', gated };
}

/** The graph's key for this input, written on the run: null when the graph derives none. */
async function deriveConcurrency(
  meta: RunMeta,
  graph: Graph,
  input: unknown,
  store: RedisRunStore,
): Promise<Concurrency | null> {
  if (!graph.concurrency) return null;
  let value;
  try {
    value = graph.concurrency.key(input);
  } catch (error) {
    throw new AgentqError('INVALID_GRAPH', `graph ${graph.id}: its concurrency key threw: ${(error as Error).message}`);
  }
  if (value === null || value === undefined || value === '') return null;
  const concurrency = { key: derivedConcurrencyKey(String(value)), limit: graph.concurrency.limit };
  await store.commits.noteOnMeta(meta.id, 'concurrency', JSON.stringify(concurrency));
  return concurrency;
}
