import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { Message } from '../../../shared/contracts/run-record.js';
import type { MemoryState } from './memory-state.js';

/** Put in front of a summary in the system message. */
export const SUMMARY_HEADING =
  'Summary of the earlier conversation (older messages were summarised to fit the context window):';

/** The system message that stands for the summarised messages: the system prompt, then the summary. */
function summaryMessage(memory: MemoryState): Message {
  const summary = `${SUMMARY_HEADING}\n${memory.summary ?? ''}`;
  // One system message, first: some chat templates reject a second system message or two user turns in a row.
  return { role: 'system', content: memory.system ? `${memory.system}\n\n${summary}` : summary };
}

/** Put in front of an anchored request in the system message. */
export const ANCHOR_HEADING = 'The request you are working on (kept verbatim):';

/**
 * What the model is shown: the history from `upTo`, preceded — once something was summarised — by the
 * system prompt with the summary and the pinned user message. A valid history whenever `upTo` is a safe
 * cut (never the index of a tool message), which `chooseSummaryCut` guarantees.
 *
 * `anchor`: a request that must stay verbatim whatever was summarised (a `reflect` task, a
 * `multi-agent` query, where the latest user message may be a critique or a final-answer request):
 * after a summary it follows the system prompt in the system message, and is not pinned a second time.
 */
export function promptView(memory: MemoryState, tail: readonly Message[], anchor?: string): Message[] {
  if (memory.upTo === 0) return [...tail];
  const anchored =
    anchor === undefined
      ? memory
      : { ...memory, system: `${memory.system ? `${memory.system}\n\n` : ''}${ANCHOR_HEADING}\n${anchor}` };
  const pinned = memory.pinned && memory.pinned.content !== anchor ? [memory.pinned] : [];
  return [summaryMessage(anchored), ...pinned, ...tail];
}

interface PromptHistory {
  /** The prompt's messages so far (`promptView`). */
  messages: Message[];
  /** Messages from `upTo` on, as stored. */
  tail: Message[];
  /** Length of the whole stored history. */
  length: number;
}

/** Loads only the messages a prompt needs (from `memory.upTo`), never the summarised ones. `anchor`: see promptView. */
export async function loadPromptHistory(
  context: Pick<NodeContext, 'history'>,
  memory: MemoryState,
  anchor?: string,
): Promise<PromptHistory> {
  const tail = memory.upTo > 0 ? await context.history({ from: memory.upTo }) : await context.history();
  return { messages: promptView(memory, tail, anchor), tail, length: memory.upTo + tail.length };
}
