import { z } from 'zod';
import { AgentqError } from '../../shared/errors.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, Send, START } from '../../shared/graph/graph.js';
import type { NodeContext } from '../../shared/graph/node-context.js';
import { callLanguageModel } from '../../shared/llm/call-language-model.js';
import { contextWindowOf } from '../../shared/llm/context-window.js';
import { estimatePromptTokens } from '../../shared/llm/estimate-tokens.js';
import { memoryChannel } from '../../shared/memory/memory-state.js';
import { loadPromptHistory } from '../../shared/memory/prompt-history.js';
import { shouldSummarize, summarizeHistory } from '../../shared/memory/summarize-history.js';
import { agentSettingsOf, languageModelOf, toolRegistryOf, type AgentSettings } from '../../shared/ports/agent-services.js';
import type { ToolCall } from '../../shared/ports/language-model.js';
import type { Message } from '../../shared/run-record.js';
import { reactAgentInputSchema, type ReactAgentOutput } from '../../shared/schemas/react-agent-input.js';
import { executeToolCall } from '../../shared/tools/execute-tool-call.js';

export const DEFAULT_REACT_SYSTEM_PROMPT =
  'You are a helpful assistant. Use the tools you are given when they help you answer accurately, ' +
  'call several at once when they do not depend on each other, and then answer the user directly and concisely.';

/** Said to the model when AGENTQ_MAX_TOOL_ROUNDS is reached; it then gets no tools. */
export const FINAL_ANSWER_REQUEST =
  'You have used all the tool calls allowed for this task. Answer now with what you know, without calling tools; say what remains uncertain.';

/** Attempts of one tool step; a tool's retryable error is retried until the last one, then the model is told. */
const TOOL_MAX_ATTEMPTS = 3;

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/**
 * The `react-agent` graph: a system prompt, the user's query, then a loop of `model` (one LLM call
 * per step) and `tool` (one tool call per step; parallel calls run as one superstep through `Send`)
 * until the model answers without calling tools.
 *
 * After AGENTQ_MAX_TOOL_ROUNDS responses with tool calls, the model is asked once more, without
 * tools, for a final answer; if it still calls tools, the run fails with TOOL_ERROR.
 *
 * Memory: when a prompt would exceed AGENTQ_SUMMARIZE_AT of the model's context window, `model` sends
 * nothing and routes to `summarize`, its own checkpointed step, which folds older messages into a
 * summary (state key `memory`; the stored history stays complete); `model` then runs again on the
 * shorter prompt. A run enqueued with a `conversationId` starts from the conversation's earlier
 * history (seeded by the intake) and adds its query as the next user turn.
 */
export const reactAgentGraph = defineGraph({
  name: 'react-agent',
  version: '1',
  input: reactAgentInputSchema,
  state: {
    query: channel.replace(''),
    system: channel.replace<string | null>(null),
    /** Tool names the run may use; null = every registered tool. */
    tools: channel.replace<string[] | null>(null),
    /** The calls of the last model response, fanned out to `tool` steps. */
    pendingToolCalls: channel.replace<ToolCall[]>([]),
    /** Model responses with tool calls so far. */
    toolRounds: channel.replace(0),
    answer: channel.replace(''),
    /** Which older messages prompts show as a summary (shared/memory). */
    memory: memoryChannel(),
    /** The model step added this run's user turn; null in runs admitted before this key existed. */
    turnStarted: channel.replace<boolean | null>(null),
    /** The prompt is too long: the next step summarises the history. */
    summarize: channel.replace(false),
  },
  initialState: (input) => ({ query: input.query, system: input.system ?? null, tools: input.tools ?? null, turnStarted: false }),
  output: (state): ReactAgentOutput => ({ answer: state.answer }),
})
  .node(
    'model',
    async (state, context) => {
      const settings = agentSettingsOf(context);
      // Checked before any model call, so a bad tool name costs nothing (invariant I5's spirit).
      const tools = toolRegistryOf(context).select(state.tools ?? undefined);
      const { messages: history, length } = await loadPromptHistory(context, state.memory);
      const added: Message[] = [];
      // A conversation's run starts with earlier turns in its history: its own query is still to add.
      const startTurn = state.turnStarted === false || (state.turnStarted === null && length === 0);
      if (startTurn) {
        if (length === 0) added.push({ role: 'system', content: state.system ?? DEFAULT_REACT_SYSTEM_PROMPT });
        added.push({ role: 'user', content: state.query });
      }
      const finalRound = tools.length > 0 && state.toolRounds >= settings.maxToolRounds;
      if (finalRound) added.push({ role: 'user', content: FINAL_ANSWER_REQUEST });
      const messages = [...history, ...added];
      const toolDescriptions = tools.length > 0 && !finalRound ? tools.map((tool) => tool.describe()) : undefined;
      let promptTokens: number | undefined;
      if (settings.summarizeAt > 0) {
        promptTokens = await estimatePromptTokens(messages, toolDescriptions);
        if (shouldSummarize(state.memory, length, promptTokens, { contextWindow: contextWindowFor(context, settings), summarizeAt: settings.summarizeAt })) {
          // Nothing is sent or appended: the summary is its own step, then this node runs again.
          return { summarize: true, pendingToolCalls: [] };
        }
      }
      const response = await callLanguageModel(context, { messages, ...(toolDescriptions ? { tools: toolDescriptions } : {}) }, promptTokens === undefined ? {} : { promptTokens });
      const toolCalls = response.message.tool_calls ?? [];
      if (toolCalls.length > 0 && (finalRound || tools.length === 0)) {
        // Appending this message without tool results would break invariant I3, so the run stops here.
        throw new AgentqError(
          'TOOL_ERROR',
          finalRound
            ? `the model still called tools (${toolCalls.map((call) => call.function.name).join(', ')}) after ${settings.maxToolRounds} tool rounds and a request for a final answer without tools; raise AGENTQ_MAX_TOOL_ROUNDS if the task needs more`
            : `the model called tools (${toolCalls.map((call) => call.function.name).join(', ')}) although this run offers none`,
        );
      }
      return {
        messages: [...added, response.message],
        turnStarted: true,
        summarize: false,
        pendingToolCalls: toolCalls,
        ...(toolCalls.length > 0 ? { toolRounds: state.toolRounds + 1 } : { answer: response.message.content ?? '' }),
      };
    },
    { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } },
  )
  .node(
    'tool',
    async (state, context) => {
      const call = toolCallOf(context);
      const settings = agentSettingsOf(context);
      const tools = toolRegistryOf(context).select(state.tools ?? undefined);
      await context.emit('tool-call', { toolCallId: call.id, tool: call.function.name });
      // Saved once done: a re-delivered step does not repeat the call (tools also get an idempotency key).
      const content = await context.memo('tool', () =>
        executeToolCall(call, context, { tools, maxResultChars: settings.maxToolResultChars, traceContent: settings.traceContent, maxAttempts: TOOL_MAX_ATTEMPTS }),
      );
      await context.emit('tool-result', { toolCallId: call.id, tool: call.function.name, chars: content.length });
      return { messages: [{ role: 'tool', tool_call_id: call.id, content }] };
    },
    { retry: { maxAttempts: TOOL_MAX_ATTEMPTS, initialDelayMs: 500, maxDelayMs: 10_000 } },
  )
  .node(
    'summarize',
    async (state, context) => {
      const settings = agentSettingsOf(context);
      // Room for what the next prompt adds besides the history: the tool schemas and a turn not yet started.
      const tools = toolRegistryOf(context).select(state.tools ?? undefined).map((tool) => tool.describe());
      const pendingTurn = state.turnStarted === false ? [{ role: 'user' as const, content: state.query }] : [];
      const reservedTokens = await estimatePromptTokens(pendingTurn, tools);
      const memory = await summarizeHistory(context, state.memory, { contextWindow: contextWindowFor(context, settings), summarizeAt: settings.summarizeAt, reservedTokens });
      return { memory, summarize: false };
    },
    { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } },
  )
  .edge(START, 'model')
  .route(
    'model',
    (state) => (state.summarize ? 'summarize' : state.pendingToolCalls.length > 0 ? state.pendingToolCalls.map((call) => new Send('tool', call)) : END),
    ['summarize', 'tool', END],
  )
  .edge('tool', 'model')
  .edge('summarize', 'model')
  .build();

function contextWindowFor(context: NodeContext, settings: AgentSettings): number {
  return contextWindowOf(settings.contextWindows, languageModelOf(context).modelId, settings.contextWindow);
}

function toolCallOf(context: NodeContext): ToolCall {
  const parsed = toolCallSchema.safeParse(context.arg);
  if (!parsed.success) {
    throw new AgentqError('INTERNAL', `react-agent: the tool step got no tool call to run (arg ${JSON.stringify(context.arg)?.slice(0, 200)})`);
  }
  return parsed.data;
}
