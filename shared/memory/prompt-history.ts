import type { NodeContext } from '../graph/node-context.js';
import type { Message } from '../run-record.js';
import type { MemoryState } from './memory-state.js';

/** Put in front of a summary in the system message. */
export const SUMMARY_HEADING = 'Summary of the earlier conversation (older messages were summarised to fit the context window):';

/** The system message that stands for the summarised messages: the system prompt, then the summary. */
export function summaryMessage(memory: MemoryState): Message {
  const summary = `${SUMMARY_HEADING}\n${memory.summary ?? ''}`;
  // One system message, first: some chat templates reject a second system message or two user turns in a row.
  return { role: 'system', content: memory.system ? `${memory.system}\n\n${summary}` : summary };
}

/**
 * What the model is shown: the history from `upTo`, preceded — once something was summarised — by the
 * system prompt with the summary and the pinned user message. Valid for I3 whenever `upTo` is a safe
 * cut (never the index of a tool message), which `chooseSummaryCut` guarantees.
 */
export function promptView(memory: MemoryState, tail: readonly Message[]): Message[] {
  if (memory.upTo === 0) return [...tail];
  return [summaryMessage(memory), ...(memory.pinned ? [memory.pinned] : []), ...tail];
}

export interface PromptHistory {
  /** The prompt's messages so far (`promptView`). */
  messages: Message[];
  /** Messages from `upTo` on, as stored. */
  tail: Message[];
  /** Length of the whole stored history. */
  length: number;
}

/** Loads only the messages a prompt needs (from `memory.upTo`), never the summarised ones. */
export async function loadPromptHistory(context: Pick<NodeContext, 'history'>, memory: MemoryState): Promise<PromptHistory> {
  const tail = memory.upTo > 0 ? await context.history({ from: memory.upTo }) : await context.history();
  return { messages: promptView(memory, tail), tail, length: memory.upTo + tail.length };
}
