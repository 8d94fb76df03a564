import { AgentqError } from '../../../shared/contracts/errors.js';
import { channel, type StateOf } from '../../../shared/graph/channels.js';
import { type NodeFunction } from '../../../shared/graph/graph.js';
import { callLanguageModel } from '../llm/call-language-model.js';
import { estimatePromptTokens } from '../../../shared/llm/estimate-tokens.js';
import { planGuardrails, type GuardrailPlan } from '../../../shared/contracts/guardrail-spec.js';
import { guardrailRegistryOf } from '../guardrails/guardrail-registry-of.js';
import { memoryChannel } from '../../runtime/memory/memory-state.js';
import { messageWindow } from '../memory/message-window.js';
import { loadPromptHistory } from '../../runtime/memory/prompt-history.js';
import { openTurn, turnStartedChannel } from '../memory/conversation-turn.js';
import { shouldSummarize, summarizeHistory } from '../memory/summarize-history.js';
import { summarizeAtFor } from '../memory/summarize-step.js';
import { contextWindowFor, type RunSettings } from './react-run-settings.js';
import { agentSettingsOf } from '../agent-services.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';
import type { BeforeToolCall } from '../tools/before-tool-call.js';
import { userTurnMessage, type ImagePart } from './react-turn.js';
import type { AssistantMessage, ImageOutput, ToolCall } from '../../../shared/ports/language-model.js';
import type { Message } from '../../../shared/contracts/run-record.js';
import { type MemoryKeep } from '../schemas/react-agent-input.js';
import { resolveToolHandling, type ToolHandling } from '../tools/tool-handling.js';
import { runToolCall, TOOL_MAX_ATTEMPTS } from '../tools/run-tool-call.js';
import type { RetrieveOptions } from '../schemas/retrieve-options.js';
import { formatPassages, retrievalChannel } from '../retrieval-node.js';

export const DEFAULT_REACT_SYSTEM_PROMPT =
  'You are a helpful assistant. Use the tools you are given when they help you answer accurately, ' +
  'call several at once when they do not depend on each other, and then answer the user directly and concisely.';

/** Said to the model when AGENTQ_MAX_TOOL_ROUNDS is reached; it then gets no tools. */
export const FINAL_ANSWER_REQUEST =
  'You have used all the tool calls allowed for this task. Answer now with what you know, without calling tools; say what remains uncertain.';

export { TOOL_MAX_ATTEMPTS } from '../tools/run-tool-call.js';

/** The state of a react-agent run. */
export function reactAgentChannels() {
  return {
    query: channel.replace(''),
    /** The image parts of the run's query (content parts), sent with its text. */
    queryImages: channel.replace<ImagePart[]>([]),
    /** The run's input, for the graph's tool provider (null without one). */
    providerInput: channel.replace<unknown>(null),
    /** What a conversation's next turn keeps of this one (read by the intake of that turn). */
    memoryKeep: channel.replace<MemoryKeep | null>(null),
    system: channel.replace<string | null>(null),
    /** Tool names the run may use; null = every registered tool. */
    tools: channel.replace<string[] | null>(null),
    /** The calls of the last model response, fanned out to `tool` steps. */
    pendingToolCalls: channel.replace<ToolCall[]>([]),
    /** Model responses with tool calls so far. */
    toolRounds: channel.replace(0),
    answer: channel.replace(''),
    /** Which older messages prompts show as a summary (worker/agents/memory). */
    memory: memoryChannel(),
    /** The model step added this run's user turn; null in runs admitted before this key existed. */
    turnStarted: turnStartedChannel(),
    /** The prompt is too long: the next step summarises the history. */
    summarize: channel.replace(false),
    /** The run's own model settings and tool handling (its input), over the worker's. */
    settings: channel.replace<RunSettings>({}),
    /** The graph's guardrails with the run's overrides. */
    guardrails: channel.replace<GuardrailPlan>(() => planGuardrails()),
    /** A final answer waiting for the output guardrails (not yet in the history). */
    draft: channel.replace<AssistantMessage | null>(null),
    /** Output guardrail reprompts so far; the model is asked again while this is below maxReprompts. */
    reprompts: channel.replace(0),
    /** The output guardrails sent the model back: `output_guard` routes to `model`. */
    reprompting: channel.replace(false),
    /** The result of a `returnDirect` tool: the run ends with it as its answer. */
    directAnswer: channel.replace<string | null>(null),
    /** The run's `retrieve` option; null: no retrieval step. */
    retrieveOptions: channel.replace<RetrieveOptions | null>(null),
    /** What the `retrieve` step found (shown with the query, listed as the output's `sources`). */
    retrieval: retrievalChannel(),
    /** Images the model returned in this run (the output's `images`). */
    images: channel.append<ImageOutput>(),
    /** The retrieved passages join the stored question (false: only the prompts of this run show them). */
    storeRetrievedContent: channel.replace(true),
    /** Message-window memory: prompts show this many of the latest messages; null: the summariser. */
    messageWindow: channel.replace<number | null>(null),
    /** The run's summarising share of the context window; null: the worker's AGENTQ_SUMMARIZE_AT. */
    summarizeAt: channel.replace<number | null>(null),
  };
}

type ReactAgentChannels = ReturnType<typeof reactAgentChannels>;
type ReactAgentNode = NodeFunction<ReactAgentChannels>;

/** The tools a run may use (the graph's fixed ones and its tool provider's for the run's input). */
type RunTools = (context: NodeContext, state: { tools: string[] | null; providerInput: unknown }) => Promise<AnyTool[]>;

/**
 * `model`: one LLM call on the prompt (history, or its window, and the turn), unless the prompt is too
 * long (then `summarize` runs first); its tool calls fan out to `tool` steps.
 */
export function reactModelNode(runTools: RunTools): ReactAgentNode {
  return async (state, context) => {
    const settings = agentSettingsOf(context);
    const maxToolRounds = state.settings.maxToolRounds ?? settings.maxToolRounds;
    // Checked before any model call, so a bad tool name costs nothing (bad input stops at the door).
    const tools = await runTools(context, state);
    if (state.guardrails.output.length > 0) guardrailRegistryOf(context).bind(state.guardrails);
    const { messages: history, length } = await loadPromptHistory(context, state.memory);
    const { stored, sent } = questionOf(state);
    const added: Message[] = openTurn({
      turnStarted: state.turnStarted,
      historyLength: length,
      system: state.system ?? DEFAULT_REACT_SYSTEM_PROMPT,
      question: stored,
    });
    const finalRound = tools.length > 0 && state.toolRounds >= maxToolRounds;
    if (finalRound) added.push({ role: 'user', content: FINAL_ANSWER_REQUEST });
    const messages = withSentQuestion(
      [...(state.messageWindow === null ? history : messageWindow(history, state.messageWindow)), ...added],
      stored,
      sent,
    );
    const toolDescriptions = tools.length > 0 && !finalRound ? tools.map((tool) => tool.describe()) : undefined;
    let promptTokens: number | undefined;
    const summarizeAt = summarizeAtFor(context, state.summarizeAt);
    if (summarizeAt > 0 && state.messageWindow === null) {
      promptTokens = await estimatePromptTokens(messages, toolDescriptions);
      if (
        shouldSummarize(state.memory, length, promptTokens, {
          contextWindow: contextWindowFor(context, settings, state.settings),
          summarizeAt,
        })
      ) {
        // Nothing is sent or appended: the summary is its own step, then this node runs again.
        return { summarize: true, pendingToolCalls: [] };
      }
    }
    const { model, temperature, maxOutputTokens } = state.settings;
    const request = {
      messages,
      ...(toolDescriptions ? { tools: toolDescriptions } : {}),
      ...(model === undefined ? {} : { model }),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxOutputTokens === undefined ? {} : { maxTokens: maxOutputTokens }),
    };
    const accept = state.settings.accept ?? [];
    const response = await callLanguageModel(context, request, { promptTokens, accept });
    const toolCalls = response.message.tool_calls ?? [];
    // Kept beside the text, whatever the answer's path: the history holds text, the output the images.
    const images = response.images?.length ? { images: response.images } : {};
    if (toolCalls.length > 0 && (finalRound || tools.length === 0)) {
      // Appending this message without tool results would leave an invalid history (a tool call never answered),
      // so the run stops here.
      throw new AgentqError(
        'TOOL_ERROR',
        finalRound
          ? `the model still called tools (${toolCalls.map((call) => call.function.name).join(', ')}) after ${maxToolRounds} tool rounds and a request for a final answer without tools; raise AGENTQ_MAX_TOOL_ROUNDS (or the run's maxToolRounds) if the task needs more`
          : `the model called tools (${toolCalls.map((call) => call.function.name).join(', ')}) although this run offers none`,
      );
    }
    if (toolCalls.length === 0 && state.guardrails.output.length > 0) {
      // The answer joins the history only as the output guardrails leave it (redacted, or with the reprompt).
      return {
        messages: added,
        turnStarted: true,
        summarize: false,
        pendingToolCalls: [],
        draft: response.message,
        reprompting: false,
        ...images,
      };
    }
    return {
      messages: [...added, response.message],
      turnStarted: true,
      summarize: false,
      pendingToolCalls: toolCalls,
      reprompting: false,
      ...images,
      ...(toolCalls.length > 0 ? { toolRounds: state.toolRounds + 1 } : { answer: response.message.content ?? '' }),
    };
  };
}

/** `tool`: one tool call of the model's response, through the one tool path (allow-list, approval, hooks, memo). */
export function reactToolNode({
  runTools,
  toolHandling,
  beforeToolCall,
}: {
  runTools: RunTools;
  toolHandling: ToolHandling | undefined;
  beforeToolCall: BeforeToolCall | undefined;
}): ReactAgentNode {
  return async (state, context) => {
    const { message, direct } = await runToolCall(context, {
      tools: await runTools(context, state),
      handling: resolveToolHandling(toolHandling, state.settings.toolHandling),
      maxAttempts: TOOL_MAX_ATTEMPTS,
      ...(beforeToolCall ? { beforeToolCall } : {}),
    });
    return { messages: [message], ...(direct ? { directAnswer: message.content } : {}) };
  };
}

/** `summarize`: folds older messages into the summary, leaving room for what the next prompt adds. */
export function reactSummarizeNode(runTools: RunTools): ReactAgentNode {
  return async (state, context) => {
    const settings = agentSettingsOf(context);
    // Room for what the next prompt adds besides the history: the tool schemas and a turn not yet started.
    const tools = (await runTools(context, state)).map((tool) => tool.describe());
    const pendingTurn = state.turnStarted === false ? [userTurnMessage(state.query, state.queryImages)] : [];
    const reservedTokens = await estimatePromptTokens(pendingTurn, tools);
    const summarizeAt = summarizeAtFor(context, state.summarizeAt);
    const memory = await summarizeHistory(context, state.memory, {
      contextWindow: contextWindowFor(context, settings, state.settings),
      summarizeAt,
      reservedTokens,
    });
    return { memory, summarize: false };
  };
}

/**
 * The run's question as the history stores it and as the model reads it: with the retrieved passages in
 * both, or (`storeRetrievedContent` false) only in the one sent.
 */
function questionOf(state: Readonly<StateOf<ReactAgentChannels>>): { stored: Message; sent: Message } {
  const plain = userTurnMessage(state.query, state.queryImages);
  if (!state.retrieval) return { stored: plain, sent: plain };
  const sent = userTurnMessage(`${state.query}\n\n${formatPassages(state.retrieval)}`, state.queryImages);
  return { stored: state.storeRetrievedContent === false ? plain : sent, sent };
}

/** The prompt with the run's stored question (its latest copy: a later turn may ask the same) as the model reads it. */
function withSentQuestion(messages: Message[], stored: Message, sent: Message): Message[] {
  if (stored === sent) return messages;
  const text = JSON.stringify(stored.content);
  const at = messages.findLastIndex((message) => message.role === 'user' && JSON.stringify(message.content) === text);
  return at < 0 ? messages : messages.with(at, sent);
}
