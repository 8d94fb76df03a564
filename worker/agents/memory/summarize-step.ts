import { Buffer } from 'node:buffer';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { contextWindowOf } from '../../../shared/llm/context-window.js';
import { estimatePromptTokens, IMAGE_TOKENS } from '../../../shared/llm/estimate-tokens.js';
import { agentSettingsOf, languageModelOf } from '../agent-services.js';
import type { ToolDescription } from '../../../shared/ports/language-model.js';
import { contentImages, contentText, type Message } from '../../../shared/contracts/run-record.js';
import type { MemoryState } from '../../runtime/memory/memory-state.js';
import { shouldSummarize, summarizeHistory } from './summarize-history.js';

/** The worker's context window for `model` (AGENTQ_CONTEXT_WINDOW / AGENTQ_CONTEXT_WINDOWS). @default model: the worker's */
function contextWindowFor(context: Pick<NodeContext, 'services'>, model?: string): number {
  const settings = agentSettingsOf(context);
  return contextWindowOf(settings.contextWindows, model ?? languageModelOf(context).modelId, settings.contextWindow);
}

/**
 * The share of the context window past which prompts are summarised: the run's own (its input's
 * `memory.summarizeAt`) when it names one, else the worker's AGENTQ_SUMMARIZE_AT. 0: never.
 */
export function summarizeAtFor(context: Pick<NodeContext, 'services'>, run?: number | null): number {
  return run ?? agentSettingsOf(context).summarizeAt;
}

/**
 * For any agent graph's model node: whether this prompt should wait for a summary step first (past
 * `summarizeAt` of the context window, default AGENTQ_SUMMARIZE_AT), and its token count to pass on to
 * `callLanguageModel`. Pair it with `summarizeStep` as a node and a route `summarize → model`.
 */
export async function checkPromptSize(
  context: NodeContext,
  memory: MemoryState,
  historyLength: number,
  messages: readonly Message[],
  tools?: readonly ToolDescription[],
  { summarizeAt = agentSettingsOf(context).summarizeAt }: { summarizeAt?: number } = {},
): Promise<{ summarize: boolean; promptTokens?: number }> {
  if (summarizeAt <= 0) return { summarize: false };
  // A token is at least one UTF-8 byte: a prompt with fewer bytes than the threshold cannot pass it,
  // and is sent without loading the tokenizer (~0.2 s on first use).
  const bytes =
    messages.reduce(
      (sum, message) =>
        sum +
        8 +
        Buffer.byteLength(contentText(message.content)) +
        // An image's tokens are not in its text: count them as bytes (a byte per token is the floor).
        contentImages(message.content).length * IMAGE_TOKENS.high +
        Buffer.byteLength(JSON.stringify(message.tool_calls ?? '')),
      0,
    ) + Buffer.byteLength(JSON.stringify(tools ?? []));
  if (bytes <= summarizeAt * contextWindowFor(context)) return { summarize: false };
  const promptTokens = await estimatePromptTokens([...messages], tools ? [...tools] : undefined);
  return {
    summarize: shouldSummarize(memory, historyLength, promptTokens, {
      contextWindow: contextWindowFor(context),
      summarizeAt,
    }),
    promptTokens,
  };
}

/**
 * The summary step of any agent graph: folds older messages into the state's `memory` (its own
 * checkpointed step; the summary's model call is memoised, so a retried step does not pay twice).
 * `reservedTokens`: what the next prompt carries besides the history (tool schemas, an anchored request).
 */
export async function summarizeStep(
  context: NodeContext,
  memory: MemoryState,
  {
    reservedTokens = 0,
    summarizeAt = agentSettingsOf(context).summarizeAt,
  }: { reservedTokens?: number; summarizeAt?: number } = {},
): Promise<MemoryState> {
  return summarizeHistory(context, memory, { contextWindow: contextWindowFor(context), summarizeAt, reservedTokens });
}
