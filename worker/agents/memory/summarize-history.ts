import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { callLanguageModel } from '../llm/call-language-model.js';
import { estimatePromptTokens, estimateTextTokens } from '../../../shared/llm/estimate-tokens.js';
import { contentText, type Message } from '../../../shared/contracts/run-record.js';
import { chooseSummaryCut, latestUserIndex } from './choose-summary-cut.js';
import type { MemoryState } from '../../runtime/memory/memory-state.js';
import { loadPromptHistory } from '../../runtime/memory/prompt-history.js';

export const SUMMARIZER_SYSTEM_PROMPT =
  'You summarise the earlier part of a conversation between a user and an AI assistant that uses tools, so the assistant can ' +
  "continue with your summary in place of those messages. Keep the user's goals, constraints and preferences; facts, numbers, " +
  'names and decisions; the tool results that matter, with their values; what was done and what is still open. Be concise and ' +
  'factual, write plain text without a preamble, and do not answer the user yourself.';

/** A message longer than this is cut in the summariser's transcript. */
const MAX_MESSAGE_CHARS = 4000;

export interface SummarizeHistoryOptions {
  /** The model's context window in tokens. */
  contextWindow: number;
  /** The share of the window at which prompts are summarised (AGENTQ_SUMMARIZE_AT). */
  summarizeAt: number;
  /** The memo key of the summariser's model call. @default 'summary' */
  key?: string;
  /** Tokens every prompt carries besides the history (tool schemas, a turn not yet added), kept free. @default 0 */
  reservedTokens?: number;
}

/**
 * True when a prompt of `promptTokens` exceeds the summarising threshold and the history grew since
 * the last summary (a prompt that is still too long right after a summary is sent as is: the loop
 * guard that keeps a run from summarising forever).
 */
export function shouldSummarize(
  memory: MemoryState,
  historyLength: number,
  promptTokens: number,
  { contextWindow, summarizeAt }: Pick<SummarizeHistoryOptions, 'contextWindow' | 'summarizeAt'>,
): boolean {
  return summarizeAt > 0 && promptTokens > summarizeAt * contextWindow && memory.summarizedAtLength !== historyLength;
}

/**
 * Folds older messages into a summary (one model call, memoised) and returns the new memory: the
 * system prompt, the latest user message and as many recent messages as fit in half the threshold
 * (less `reservedTokens`) stay
 * verbatim; everything between becomes the summary, which includes the previous one. Nothing is
 * written to the history itself — the caller commits the returned memory as its state update.
 */
export async function summarizeHistory(
  context: NodeContext,
  memory: MemoryState,
  { contextWindow, summarizeAt, key = 'summary', reservedTokens = 0 }: SummarizeHistoryOptions,
): Promise<MemoryState> {
  const { tail, length } = await loadPromptHistory(context, memory);
  const threshold = Math.max(256, Math.floor(summarizeAt * contextWindow));
  const counts = new Map<Message, number>();
  for (const message of tail) counts.set(message, (await estimatePromptTokens([message])) - 3);
  const system = memory.upTo === 0 && tail[0]?.role === 'system' ? contentText(tail[0].content) : memory.system;
  const keepTokens = Math.max(
    0,
    Math.floor(threshold / 2) - reservedTokens - (system ? await estimateTextTokens(system) : 0),
  );
  const cut = chooseSummaryCut({
    tail,
    offset: memory.upTo,
    keepTokens,
    countTokens: (message) => counts.get(message) ?? 0,
  });
  if (cut === undefined) {
    // Only the latest block is left: nothing to fold. Mark it so the model step goes ahead.
    return { ...memory, system, summarizedAtLength: length };
  }
  const userIndex = latestUserIndex(tail, memory.upTo);
  const pinned = userIndex >= 0 ? (userIndex < cut ? tail[userIndex - memory.upTo]! : null) : memory.pinned;
  const folded = tail.slice(memory.upTo === 0 && tail[0]?.role === 'system' ? 1 : 0, cut - memory.upTo);
  const transcript = await transcriptOf(memory.summary, folded, Math.floor(contextWindow * 0.6));
  const response = await callLanguageModel(
    context,
    {
      messages: [
        { role: 'system', content: SUMMARIZER_SYSTEM_PROMPT },
        { role: 'user', content: transcript },
      ],
      maxTokens: Math.max(64, Math.min(1024, Math.floor(threshold / 4))),
    },
    { key },
  );
  const summary = (response.message.content ?? '').trim();
  if (summary === '') {
    throw new AgentqError('PROVIDER_ERROR', `the model answered an empty summary of ${folded.length} messages`, {
      retryable: true,
    });
  }
  return { upTo: cut, summary, system, pinned, summarizedAtLength: length };
}

/** The messages to fold as plain text, after the previous summary, within `maxTokens` (oldest dropped first). */
async function transcriptOf(previous: string | null, messages: readonly Message[], maxTokens: number): Promise<string> {
  const toolNames = new Map<string, string>();
  const lines = messages.map((message) => {
    const text = cut(contentText(message.content));
    if (message.role === 'tool')
      return `[tool result${toolNames.has(message.tool_call_id ?? '') ? ` of ${toolNames.get(message.tool_call_id ?? '')}` : ''}] ${text}`;
    const calls = (message.tool_calls ?? []).map((call) => {
      toolNames.set(call.id, call.function.name);
      return `${call.function.name}(${cut(call.function.arguments)})`;
    });
    return `[${message.role}] ${text}${calls.length > 0 ? `${text ? ' ' : ''}(called ${calls.join(', ')})` : ''}`;
  });
  const head = previous ? `Summary so far:\n${previous}\n\n` : '';
  const lineTokens = await Promise.all(lines.map((line) => estimateTextTokens(line)));
  let total = (await estimateTextTokens(head)) + lineTokens.reduce((sum, count) => sum + count + 1, 0);
  let omitted = 0;
  while (omitted < lines.length - 1 && total > maxTokens) {
    total -= lineTokens[omitted]! + 1;
    omitted += 1;
  }
  const body = lines.slice(omitted).join('\n');
  const note = omitted > 0 ? `[${omitted} older messages omitted]\n` : '';
  return `${head}Messages to fold into the summary:\n${note}${body}`;
}

function cut(text: string): string {
  return text.length <= MAX_MESSAGE_CHARS
    ? text
    : `${text.slice(0, MAX_MESSAGE_CHARS)}…[${text.length - MAX_MESSAGE_CHARS} characters cut]`;
}
