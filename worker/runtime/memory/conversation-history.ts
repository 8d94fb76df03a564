import type { RedisRunStore, RunMeta } from '../../../shared/store/redis-run-store.js';
import { isTerminal, type Message } from '../../../shared/contracts/run-record.js';
import type { HistorySegment } from '../../../shared/store/shared-history.js';
import { asMemoryState, emptyMemory, MEMORY_STATE_KEY, type MemoryState } from './memory-state.js';
import { promptView } from './prompt-history.js';

/** What a conversation's new run starts from. */
interface ConversationSeed {
  /** The earlier run it continues. */
  fromRunId: string;
  /** The history the new run starts with. */
  messages: Message[];
  /** The memory that goes with `messages`, for graphs with a `memory` state key. */
  memory: MemoryState;
  /** The same history flattened into plain messages, for graphs without memory. */
  flatMessages: Message[];
  /**
   * Set when the new run starts from the earlier run's whole history, as stored: the stretches of stored
   * messages that history is made of, so the new run refers to them instead of storing a copy.
   */
  shared?: HistorySegment[];
}

interface ConversationHistoryOptions {
  /** Earlier runs of the conversation looked at for a completed one, newest first. @default 20 */
  lookBack?: number;
}

/**
 * Conversations across runs (and so across workers and restarts): a run enqueued with a
 * `conversationId` starts from the history of that conversation's latest completed run. Only the part
 * that run's prompts used is copied — its system prompt, summary, pinned request and unsummarised
 * messages — so seeding costs at most one context window, however long the conversation.
 *
 * The runs of a conversation are a sorted set per tenant (a foreign tenant's conversation with the
 * same id is another conversation). Failed and cancelled turns are skipped — but the turn a run
 * interrupted (onBusy 'interrupt') is its start — and a turn enqueued while the previous one still runs
 * continues from the last completed one.
 */
export class ConversationHistory {
  private readonly lookBack: number;

  constructor(
    private readonly store: RedisRunStore,
    { lookBack = 20 }: ConversationHistoryOptions = {},
  ) {
    this.lookBack = lookBack;
  }

  /**
   * Adds `run` to its conversation and returns what it starts from (undefined: the first turn). `keep`
   * 'answers' (memory mode): only the earlier questions and final answers, without tool calls,
   * tool results and intermediate responses.
   */
  async seed(run: RunMeta, { keep = 'all' }: { keep?: 'all' | 'answers' } = {}): Promise<ConversationSeed | undefined> {
    const seed = await this.fullSeed(run);
    if (!seed || keep === 'all') return seed;
    // Only the questions and answers: a seed of its own, stored with the new run.
    const { shared: _whole, ...own } = seed;
    return {
      ...own,
      messages: questionsAndAnswers(seed.messages),
      flatMessages: questionsAndAnswers(seed.flatMessages),
    };
  }

  private async fullSeed(run: RunMeta): Promise<ConversationSeed | undefined> {
    if (!run.conversationId) return undefined;
    const { redis, keys } = this.store;
    const key = keys.conversation(run.tenant, run.conversationId);
    // Outlives its runs' retention, so a conversation idle for a while still continues.
    await redis
      .multi()
      .zadd(key, 'NX', run.createdAt, run.id)
      .expire(key, this.store.retentionSeconds * 2)
      .exec();
    const earlier = await redis.zrevrangebyscore(key, run.createdAt, '-inf', 'LIMIT', 0, this.lookBack + 1);
    for (const runId of earlier) {
      if (runId === run.id) continue;
      const previous = await this.store.reads.get(runId);
      if (!previous || previous.tenant !== run.tenant) continue;
      if (previous.status === 'completed') return this.seedFrom(runId);
      // The turn this one interrupted: what it committed, whatever it was doing when it stopped.
      if (runId === run.continuesFrom && isTerminal(previous.status)) return this.seedFrom(runId, true);
    }
    return undefined;
  }

  private async seedFrom(runId: string, interrupted = false): Promise<ConversationSeed> {
    const stored = await this.store.redis.hget(this.store.keys.run(runId).state, MEMORY_STATE_KEY);
    const memory = asMemoryState(stored === null ? null : JSON.parse(stored));
    const whole = await this.store.reads.messages(runId, memory.upTo);
    // Stopped between a model's tool calls and their results: those calls go (no provider takes them open).
    const tail = interrupted ? withoutOpenToolCalls(whole) : whole;
    if (tail.length < whole.length) {
      const flat = promptView(memory, tail);
      return { fromRunId: runId, messages: flat, memory: emptyMemory(), flatMessages: flat };
    }
    const flatMessages = promptView(memory, tail);
    if (memory.upTo === 0) {
      // Nothing summarised: the new run starts from the whole history, which it shares rather than copies.
      const earlier = await this.store.reads.history.segmentsOf(runId);
      const own = tail.length - earlier.reduce((sum, [, count]) => sum + count, 0);
      const shared: HistorySegment[] = own > 0 ? [...earlier, [runId, own]] : earlier;
      return { fromRunId: runId, messages: flatMessages, memory: emptyMemory(), flatMessages, shared };
    }
    if (memory.system === null) {
      return { fromRunId: runId, messages: flatMessages, memory: emptyMemory(), flatMessages };
    }
    // The summary stays in the memory (not folded into a message), so the new run's next summary
    // replaces it instead of nesting it: a long conversation does not grow its system prompt.
    const messages: Message[] = [
      { role: 'system', content: memory.system },
      ...(memory.pinned ? [memory.pinned] : []),
      ...tail,
    ];
    return {
      fromRunId: runId,
      messages,
      memory: { ...emptyMemory(), upTo: 1, summary: memory.summary, system: memory.system },
      flatMessages,
    };
  }
}

/**
 * The system prompt, the user's messages and the assistant's final answers (text without tool calls) of
 * a history: what the 'answers' memory mode carries to a conversation's next turn. Valid for invariant
 * a valid history by construction (no tool calls are left to answer).
 */
export function questionsAndAnswers(messages: readonly Message[]): Message[] {
  return messages.filter(
    (message) =>
      message.role === 'system' ||
      message.role === 'user' ||
      (message.role === 'assistant' && !message.tool_calls?.length && (message.content ?? '') !== ''),
  );
}

/**
 * `messages` without the last model turn whose tool calls were not all answered (a turn interrupted
 * between the two): earlier tool calls were answered, or no model call would have followed them.
 */
export function withoutOpenToolCalls(messages: readonly Message[]): Message[] {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (message.role !== 'assistant' || !message.tool_calls?.length) continue;
    const answered = new Set(messages.slice(index + 1).map((later) => later.tool_call_id));
    return message.tool_calls.every((call) => answered.has(call.id)) ? [...messages] : messages.slice(0, index);
  }
  return [...messages];
}
