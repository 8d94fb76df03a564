import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { channel } from '../../../shared/graph/channels.js';
import type { NodeFunction } from '../../../shared/graph/graph.js';
import { planGuardrails, type GuardrailPlan } from '../../../shared/contracts/guardrail-spec.js';
import { guardAnswer, guardInput } from '../guardrails/guard-text.js';
import { memoryChannel } from '../../runtime/memory/memory-state.js';
import { requestWindow } from '../memory/message-window.js';
import { openTurn, turnStartedChannel } from '../memory/conversation-turn.js';
import { loadPromptHistory } from '../../runtime/memory/prompt-history.js';
import { checkPromptSize, summarizeAtFor, summarizeStep } from '../memory/summarize-step.js';
import { callLanguageModel } from '../llm/call-language-model.js';
import type { AcceptableOutcome } from '../llm/usable-response.js';
import { embedTexts } from '../llm/embed-texts.js';
import { estimatePromptTokens, estimateTextTokens } from '../../../shared/llm/estimate-tokens.js';
import { agentSettingsOf, embedderOf } from '../agent-services.js';
import type { ToolCall, ToolDescription } from '../../../shared/ports/language-model.js';
import { type Expert, type MultiAgentOutput, type RecallMode } from '../schemas/multi-agent-input.js';
import { chooseLead, rankByEmbedding, rankLexically } from './expert-recall.js';
import { FINAL_ANSWER_REQUEST } from './react-agent-nodes.js';
import { toolCallArg } from '../tools/tool-call-arg.js';
import { runToolCall } from '../tools/run-tool-call.js';
import { runToolsOf } from '../tools/tool-provider.js';

const consultArgumentsSchema = z.object({ question: z.string().trim().min(1) });

/** The text an expert is recalled by. */
function recallText(expert: Expert): string {
  return `${expert.name.replace(/[_-]+/g, ' ')}: ${expert.description}`;
}

/** An expert's own system prompt (when answering a colleague, or leading). */
export function expertSystemPrompt(expert: Expert): string {
  return (
    expert.system ??
    `You are ${expert.name}, an expert in: ${expert.description}. Answer accurately and concisely from your expertise, ` +
      'and say plainly when something is outside it.'
  );
}

/** The lead's system prompt: its own persona, then the colleagues it may consult. */
export function leadSystemPrompt(lead: Expert, colleagues: readonly Expert[]): string {
  if (colleagues.length === 0) return expertSystemPrompt(lead);
  return (
    `${expertSystemPrompt(lead)}\n\nYou lead this task. You can consult these colleagues by calling them as tools, ` +
    `several at once when their questions are independent:\n${colleagues.map((expert) => `- ${expert.name}: ${expert.description}`).join('\n')}\n` +
    'Consult them where their expertise helps, then give the user the final answer yourself.'
  );
}

/** The tool the lead consults a colleague by. */
function consultTool(expert: Expert): ToolDescription {
  return {
    name: expert.name,
    description: `Ask ${expert.name}, an expert in: ${expert.description}. Send one self-contained question; the answer comes back as text.`,
    parameters: {
      type: 'object',
      properties: { question: { type: 'string', description: 'The question, with all the context the expert needs' } },
      required: ['question'],
      additionalProperties: false,
    },
  };
}

/** The state of a multi-agent run. */
export function multiAgentChannels() {
  return {
    query: channel.replace(''),
    experts: channel.replace<Expert[]>([]),
    topN: channel.replace(3),
    recall: channel.replace<MultiAgentOutput['recall'] | null>(null),
    /** How this run chooses its lead, and the lead it names with `specific`. */
    recallMode: channel.replace<RecallMode>('similarity'),
    leadName: channel.replace<string | null>(null),
    /** The recalled experts, best first. */
    selected: channel.replace<{ name: string; score: number | null }[]>([]),
    pendingConsults: channel.replace<ToolCall[]>([]),
    toolRounds: channel.replace(0),
    consulted: channel.append<string>(),
    answer: channel.replace(''),
    /** The run's memory window (messages after the query the lead sees); null: the summariser. */
    messageWindow: channel.replace<number | null>(null),
    /** The run's summarising share of the context window; null: the worker's AGENTQ_SUMMARIZE_AT. */
    summarizeAt: channel.replace<number | null>(null),
    /** Which older messages the lead's prompts show as a summary (worker/agents/memory). */
    memory: memoryChannel(),
    /** The lead's prompt is too long: the next step summarises the history. */
    summarize: channel.replace(false),
    /** The lead added this run's query (a conversation's run starts with the earlier turns). */
    turnStarted: turnStartedChannel(),
    /** The graph's guardrails with the run's overrides (none in runs admitted before this key existed). */
    guardrails: channel.replace<GuardrailPlan>(() => planGuardrails()),
    /** Output guardrail reprompts so far, and whether the last answer was sent back to the lead. */
    reprompts: channel.replace(0),
    reprompting: channel.replace(false),
    /** Model answers without usable output the run accepts (its `accept`). */
    accept: channel.replace<AcceptableOutcome[]>([]),
    /** Registered tools the lead may call beside its colleagues (the run's `tools`); none in older runs. */
    tools: channel.replace<string[]>([]),
  };
}

type MultiAgentNode = NodeFunction<ReturnType<typeof multiAgentChannels>>;

/**
 * `recall`: the input guardrails on the query, then the lead and its colleagues: the experts ranked by
 * similarity to the query (embeddings, else lexical), or chosen by the run's recall mode.
 */
export const recallNode: MultiAgentNode = async (state, context) => {
  // The input guardrails see the query before anything is embedded or asked (a rewrite is what follows).
  const query = await guardInput(context, state.guardrails, state.query);
  const rewritten = query === state.query ? {} : { query };
  if (state.recallMode !== 'similarity') return { ...rewritten, ...chooseLead(state) };
  const embedder = embedderOf(context);
  const texts = state.experts.map(recallText);
  if (!embedder) {
    const ranked = rankLexically(query, texts, state.topN);
    return {
      ...rewritten,
      recall: 'lexical' as const,
      selected: ranked.map(({ index, score }) => ({ name: state.experts[index]!.name, score: round(score) })),
    };
  }
  const { vectors } = await embedTexts(context, embedder, [query, ...texts]);
  const ranked = rankByEmbedding(vectors[0]!, vectors.slice(1), state.topN);
  return {
    ...rewritten,
    recall: 'embedding' as const,
    selected: ranked.map(({ index, score }) => ({ name: state.experts[index]!.name, score: round(score) })),
  };
};

/**
 * `lead`: one model call of the lead expert with its colleagues as tools, unless the prompt is too long
 * (then `summarize` runs first); its consultations fan out to `consult` steps, its answer goes through the
 * output guardrails.
 */
export const leadNode: MultiAgentNode = async (state, context) => {
  const settings = agentSettingsOf(context);
  const [lead, ...colleagues] = state.selected.map(({ name }) => expertNamed(state.experts, name));
  if (!lead) throw new AgentqError('INTERNAL', 'multi-agent: no expert was recalled to lead');
  // Bounded by the tool rounds (AGENTQ_MAX_TOOL_ROUNDS), but answers can be long: past the threshold they are
  // summarised. With a window nothing is ever summarised (upTo stays 0): this is the whole history.
  const { messages: history, length } = await loadPromptHistory(context, state.memory, state.query);
  // A conversation's run starts with the earlier turns in its history: its own query is still to add.
  const added = openTurn({
    turnStarted: state.turnStarted,
    historyLength: length,
    system: leadSystemPrompt(lead, colleagues),
    question: { role: 'user', content: state.query },
  });
  // Checked before any model call: a tool the run may not use fails it here, not after a paid call.
  const registered = (await runToolsOf(context, state.tools)).map((tool) => tool.describe());
  const offered = [...colleagues.map(consultTool), ...registered];
  const finalRound = offered.length > 0 && state.toolRounds >= settings.maxToolRounds;
  if (finalRound) added.push({ role: 'user', content: FINAL_ANSWER_REQUEST });
  // A window keeps the lead's system prompt and the query in view; it never starts at a tool result
  // (a result without its call is an invalid history).
  const messages =
    state.messageWindow === null
      ? [...history, ...added]
      : requestWindow(history, { request: state.query, added, size: state.messageWindow });
  const tools = offered.length > 0 && !finalRound ? offered : undefined;
  let promptTokens: number | undefined;
  if (state.messageWindow === null) {
    // Nothing is sent or appended past the threshold: the summary is its own step, then this one runs again.
    const size = await checkPromptSize(context, state.memory, length, messages, tools, {
      summarizeAt: summarizeAtFor(context, state.summarizeAt),
    });
    if (size.summarize) return { summarize: true, pendingConsults: [] };
    promptTokens = size.promptTokens;
  }
  const response = await callLanguageModel(
    context,
    { messages, ...(tools ? { tools } : {}) },
    { promptTokens, accept: state.accept },
  );
  const calls = response.message.tool_calls ?? [];
  if (calls.length > 0 && (finalRound || offered.length === 0)) {
    throw new AgentqError(
      'TOOL_ERROR',
      finalRound
        ? `the lead expert '${lead.name}' still consulted colleagues after ${settings.maxToolRounds} rounds and a request for a final answer; raise AGENTQ_MAX_TOOL_ROUNDS if the task needs more`
        : `the lead expert '${lead.name}' called tools (${calls.map((call) => call.function.name).join(', ')}) although it has no colleagues to consult and no tools`,
    );
  }
  if (calls.length > 0)
    return {
      messages: [...added, response.message],
      turnStarted: true,
      summarize: false,
      reprompting: false,
      pendingConsults: calls,
      toolRounds: state.toolRounds + 1,
    };
  // The answer joins the history as the output guardrails leave it (rewritten, or with the rejection).
  const guarded = await guardAnswer(context, state.guardrails, state.reprompts, response.message.content ?? '');
  const answered = { ...response.message, content: guarded.text };
  if (guarded.action === 'reprompt')
    return {
      messages: [...added, answered, guarded.rejection],
      turnStarted: true,
      summarize: false,
      pendingConsults: [],
      reprompts: guarded.reprompts,
      reprompting: true,
    };
  return {
    messages: [...added, answered],
    turnStarted: true,
    summarize: false,
    reprompting: false,
    pendingConsults: [],
    answer: guarded.text,
  };
};

/** Attempts of a `consult` step (a colleague's model call, or a tool call of the run's `tools`). */
export const CONSULT_MAX_ATTEMPTS = 5;

/**
 * `consult`: one colleague answers one of the lead's questions, with its own persona; a call of one of
 * the run's registered tools runs through the one tool path instead (allow-list, approval, hooks).
 */
export const consultNode: MultiAgentNode = async (state, context) => {
  const call = toolCallArg(context, 'multi-agent: the consult step');
  const colleagues = state.selected.slice(1).map(({ name }) => name);
  const expert = colleagues.includes(call.function.name) ? expertNamed(state.experts, call.function.name) : undefined;
  if (!expert && state.tools.length > 0) {
    const { message } = await runToolCall(context, {
      tools: await runToolsOf(context, state.tools),
      maxAttempts: CONSULT_MAX_ATTEMPTS,
    });
    return { messages: [message] };
  }
  await context.emit('tool-call', { toolCallId: call.id, tool: call.function.name });
  const question = parseQuestion(call.function.arguments);
  let content: string;
  if (!expert) {
    content = `Error: there is no colleague named '${call.function.name}'. You can consult: ${colleagues.join(', ') || 'nobody'}.`;
  } else if (question === undefined) {
    content = `Error: consult ${expert.name} with arguments {"question": "<your question>"}.`;
  } else {
    const response = await callLanguageModel(
      context,
      {
        messages: [
          { role: 'system', content: expertSystemPrompt(expert) },
          { role: 'user', content: question },
        ],
      },
      { accept: state.accept },
    );
    content = response.message.content ?? '';
  }
  await context.emit('tool-result', { toolCallId: call.id, tool: call.function.name, chars: content.length });
  return {
    messages: [{ role: 'tool', tool_call_id: call.id, content }],
    ...(expert && question !== undefined ? { consulted: expert.name } : {}),
  };
};

/** `summarize`: folds older consultations into a summary, leaving room for the tools and the query. */
export const summarizeNode: MultiAgentNode = async (state, context) => {
  // Room for what the next prompt carries besides the history: the consult tools, the run's tools and the
  // query (anchored in the system message).
  const colleagues = state.selected.slice(1).map(({ name }) => expertNamed(state.experts, name));
  const tools = [
    ...colleagues.map(consultTool),
    ...(await runToolsOf(context, state.tools)).map((tool) => tool.describe()),
  ];
  const reservedTokens = (await estimatePromptTokens([], tools)) + (await estimateTextTokens(state.query));
  return {
    memory: await summarizeStep(context, state.memory, {
      reservedTokens,
      summarizeAt: summarizeAtFor(context, state.summarizeAt),
    }),
    summarize: false,
  };
};

function expertNamed(experts: readonly Expert[], name: string): Expert {
  const expert = experts.find((candidate) => candidate.name === name);
  if (!expert)
    throw new AgentqError('INTERNAL', `multi-agent: recalled expert '${name}' is not among the input's experts`);
  return expert;
}

function parseQuestion(text: string): string | undefined {
  try {
    const parsed = consultArgumentsSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.question : undefined;
  } catch {
    return undefined;
  }
}

function round(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}
