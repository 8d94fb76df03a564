import { channel, type StateOf } from '../../../shared/graph/channels.js';
import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, Send, START, type AnyGraph, type NodeFunction, type NodeResult } from '../../../shared/graph/graph.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { callLanguageModel } from '../llm/call-language-model.js';
import type { AcceptableOutcome } from '../llm/usable-response.js';
import { generateObject } from '../llm/generate-object.js';
import { transformingNodes, type ChatRequestTransformer } from '../llm/chat-request-transformer.js';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { estimateTextTokens } from '../../../shared/llm/estimate-tokens.js';
import { planGuardrails, type GuardrailPlan, type GuardrailsInput } from '../../../shared/contracts/guardrail-spec.js';
import { guardAnswer, guardInput } from '../guardrails/guard-text.js';
import { memoryChannel } from '../../runtime/memory/memory-state.js';
import { requestWindow } from '../memory/message-window.js';
import { openTurn, turnStartedChannel } from '../memory/conversation-turn.js';
import { loadPromptHistory } from '../../runtime/memory/prompt-history.js';
import { checkPromptSize, summarizeAtFor, summarizeStep } from '../memory/summarize-step.js';
import { memoryChoiceOf } from '../schemas/react-agent-input.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';
import { agentSettingsOf } from '../agent-services.js';
import { runToolCall, TOOL_MAX_ATTEMPTS } from '../tools/run-tool-call.js';
import { runToolsOf } from '../tools/tool-provider.js';
import { FINAL_ANSWER_REQUEST } from './react-agent-nodes.js';
import {
  reflectInputSchema,
  reflectVerdictSchema,
  type ReflectOutput,
  type ReflectVerdict,
} from '../schemas/reflect-input.js';

export const DEFAULT_WRITER_SYSTEM_PROMPT =
  'You are a careful writer. Do the task you are given. When a reviewer sends a critique, revise your answer to address every ' +
  'point, and reply with the complete revised answer only.';

export const DEFAULT_JUDGE_SYSTEM_PROMPT =
  'You are a strict reviewer. Judge whether the draft fully accomplishes the task and meets the criteria. Approve only a draft ' +
  'that needs no change. Otherwise give a specific, actionable critique: what is wrong or missing and how to fix it.';

const DEFAULT_CRITERIA = 'correct, complete, and clear';

const RETRY = { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } } as const;

/** The user message that takes the judge's critique back to the writer. */
export function critiqueMessage(critique: string): string {
  return `A reviewer did not approve your answer yet. Their critique:\n${critique}\n\nRevise your answer to address it; reply with the complete revised answer only.`;
}

/** The `reflect` graph's state; custom writers and judges read it (and write `draft` / `verdict`). */
export const reflectState = {
  task: channel.replace(''),
  criteria: channel.replace(DEFAULT_CRITERIA),
  writerSystem: channel.replace(DEFAULT_WRITER_SYSTEM_PROMPT),
  judgeSystem: channel.replace(DEFAULT_JUDGE_SYSTEM_PROMPT),
  maxIterations: channel.replace(3),
  /** Drafts written so far. */
  iteration: channel.replace(0),
  draft: channel.replace(''),
  approved: channel.replace(false),
  reviews: channel.append<ReflectVerdict & { iteration: number }>(),
  /** The run's memory window (messages after the task the writer sees); null: the summariser. */
  messageWindow: channel.replace<number | null>(null),
  /** The run's summarising share of the context window; null: the worker's AGENTQ_SUMMARIZE_AT. */
  summarizeAt: channel.replace<number | null>(null),
  /** Model answers without usable output the writer's calls accept (the run's `accept`); the judge needs a verdict. */
  accept: channel.replace<AcceptableOutcome[]>([]),
  /** The latest critique (null before the first review): what a custom writer revises against. */
  critique: channel.replace<string | null>(null),
  /** A custom judge's verdict on the latest draft, applied by the graph. */
  verdict: channel.replace<ReflectVerdict | null>(null),
  /** Which older messages the writer's prompts show as a summary (worker/agents/memory). */
  memory: memoryChannel(),
  /** The writer's prompt is too long: the next step summarises the history. */
  summarize: channel.replace(false),
  /** The built-in writer added this run's task (a conversation's run starts with the earlier turns). */
  turnStarted: turnStartedChannel(),
  /** The graph's guardrails with the run's overrides (none in runs admitted before this key existed). */
  guardrails: channel.replace<GuardrailPlan>(() => planGuardrails()),
  /** Output guardrail reprompts so far. */
  reprompts: channel.replace(0),
  /** Registered tools the built-in writer may call (the run's `tools`); none in older runs. */
  tools: channel.replace<string[]>([]),
  /** The built-in writer's tool calls, fanned out to `tool` steps, and its responses with tool calls so far. */
  pendingToolCalls: channel.replace<ToolCall[]>([]),
  toolRounds: channel.replace(0),
};
export type ReflectState = StateOf<typeof reflectState>;
type ReflectUpdate = NodeResult<typeof reflectState>;

/**
 * A writer of your own: a node function or a built subgraph over `reflectState`'s keys that writes the
 * next `draft` (reading `task`, `criteria`, `critique`, `reviews`); it may append messages.
 */
export type ReflectWriter = NodeFunction<typeof reflectState> | AnyGraph;
/** A judge of your own: a node function or a built subgraph that writes `verdict: { approved, critique }`. */
export type ReflectJudge = NodeFunction<typeof reflectState> | AnyGraph;

/** How a reflect graph is built: its name, its writer and judge, and its runs' default draft cap. */
export interface ReflectGraphOptions {
  /** @default 'reflect' */
  name?: string;
  /** @default '1' */
  version?: string;
  /** @default the built-in writer: one model call with the writer's system prompt */
  writer?: ReflectWriter;
  /** @default the built-in judge: a structured verdict through generateObject */
  judge?: ReflectJudge;
  /** Drafts at most unless a run's `maxIterations` says otherwise (1-10). @default 3 */
  maxIterations?: number;
  /** Input guardrails on the task, output guardrails on the final draft (a run's `guardrails` replaces a stage's list). @default none */
  guardrails?: GuardrailsInput;
  /** Rewrites each model request of the graph's own nodes before it is sent (then the worker's transformer runs). @default none */
  chatRequestTransformer?: ChatRequestTransformer;
}

/**
 * A `reflect` graph: `write` (the writer drafts) and `judge` (a verdict `{approved, critique}`) loop
 * until the judge approves or `maxIterations` drafts were written. The built-in writer is one model
 * call per step; the built-in judge a structured verdict through `generateObject`. A critique goes
 * back to the built-in writer as a user message, so the run's history is the writer's conversation;
 * the verdicts are in the state and the output.
 *
 * Your own writer and judge (the reference design's writer/judge pair): node functions run as the
 * `write` and `judge` steps themselves; a subgraph runs as its own steps, followed by a `drafted` or
 * `reviewed` step that counts the draft or applies the verdict.
 *
 * Memory (built-in writer): when the writer's prompt would pass AGENTQ_SUMMARIZE_AT of the context
 * window (or the run's `memory.summarizeAt`), `write` sends nothing and routes to `summarize`, its own
 * checkpointed step, which folds older drafts and critiques into a summary; the task stays verbatim in
 * the system message. `memory: {window: N}` shows the last N messages instead.
 */
export function createReflectGraph({
  name = 'reflect',
  version = '1',
  writer,
  judge,
  maxIterations = 3,
  guardrails,
  chatRequestTransformer,
}: ReflectGraphOptions = {}) {
  const node = transformingNodes(chatRequestTransformer);
  const builder = defineGraph({
    name,
    version,
    input: reflectInputSchema,
    state: reflectState,
    initialState: (input) => ({
      task: input.task,
      turnStarted: false,
      maxIterations: input.maxIterations ?? maxIterations,
      guardrails: planGuardrails(guardrails, input.guardrails),
      tools: input.tools ?? [],
      ...(input.criteria === undefined ? {} : { criteria: input.criteria }),
      ...(input.writerSystem === undefined ? {} : { writerSystem: input.writerSystem }),
      ...(input.judgeSystem === undefined ? {} : { judgeSystem: input.judgeSystem }),
      ...memoryChoiceOf(input.memory),
      accept: input.accept ?? [],
    }),
    output: (state): ReflectOutput => ({
      answer: state.draft,
      approved: state.approved,
      iterations: state.iteration,
      reviews: state.reviews,
    }),
  }).node(
    'summarize',
    node(async (state, context) => {
      // The task goes back into the system message after a summary (promptView's anchor): room for it.
      const reservedTokens = await estimateTextTokens(state.task);
      return {
        memory: await summarizeStep(context, state.memory, {
          reservedTokens,
          summarizeAt: summarizeAtFor(context, state.summarizeAt),
        }),
        summarize: false,
      };
    }),
    RETRY,
  );
  const writerIsGraph = writer !== undefined && typeof writer !== 'function';
  const judgeIsGraph = judge !== undefined && typeof judge !== 'function';
  if (writerIsGraph) builder.node('write', writer).node('drafted', (state) => drafted(state), RETRY);
  else builder.node('write', node(writer ? countDraft(writer) : builtInWriter), RETRY);
  // The built-in writer's tool calls: one step each, through the one tool path (allow-list, approval, hooks).
  if (!writer) builder.node('tool', node(toolStep), { retry: { ...RETRY.retry, maxAttempts: TOOL_MAX_ATTEMPTS } });
  if (judgeIsGraph) builder.node('judge', judge).node('reviewed', (state, context) => reviewed(state, context), RETRY);
  else builder.node('judge', node(judge ? judgeWith(judge) : builtInJudge), RETRY);
  // The input guardrails check the task before the first draft, whatever the writer is.
  builder.node(
    'input_guard',
    node(async (state, context) => {
      const task = await guardInput(context, state.guardrails, state.task);
      return task === state.task ? {} : { task };
    }),
  );
  const afterWrite = writerIsGraph ? 'drafted' : 'write';
  const afterJudge = judgeIsGraph ? 'reviewed' : 'judge';
  if (writerIsGraph) builder.edge('write', 'drafted');
  if (!writer) builder.edge('tool', 'write');
  if (judgeIsGraph) builder.edge('judge', 'reviewed');
  return builder
    .route(START, (state) => (state.guardrails.input.length > 0 ? 'input_guard' : 'write'), ['input_guard', 'write'])
    .edge('input_guard', 'write')
    .route(
      afterWrite,
      (state) =>
        state.summarize
          ? 'summarize'
          : state.pendingToolCalls.length > 0
            ? state.pendingToolCalls.map((call) => new Send('tool', call))
            : 'judge',
      writer ? ['summarize', 'judge'] : ['summarize', 'tool', 'judge'],
    )
    .edge('summarize', 'write')
    .route(afterJudge, (state) => (state.approved || state.iteration >= state.maxIterations ? END : 'write'), [
      'write',
      END,
    ])
    .build();
}

/** The built-in writer: one model call with the writer's system prompt over the conversation so far. */
const builtInWriter = async (state: Readonly<ReflectState>, context: NodeContext): Promise<ReflectUpdate> => {
  // At most 2 × maxIterations (≤ 20) messages, but drafts can be long: past the threshold they are summarised.
  // With a window nothing is ever summarised (upTo stays 0): this is the whole history.
  const window = state.messageWindow;
  const { messages: history, length } = await loadPromptHistory(context, state.memory, state.task);
  // A conversation's run starts with the earlier turns in its history: its own task is still to add.
  const added = openTurn({
    turnStarted: state.turnStarted,
    historyLength: length,
    system: state.writerSystem,
    question: { role: 'user', content: state.task },
  });
  // The run's tools are checked before any model call; after AGENTQ_MAX_TOOL_ROUNDS the writer drafts without them.
  const tools = await runToolsOf(context, state.tools);
  const finalRound = tools.length > 0 && state.toolRounds >= agentSettingsOf(context).maxToolRounds;
  if (finalRound && state.pendingToolCalls.length > 0) added.push({ role: 'user', content: FINAL_ANSWER_REQUEST });
  const offered = tools.length > 0 && !finalRound ? tools.map((tool) => tool.describe()) : undefined;
  // A window keeps the system prompt and the task in view: a writer that lost the task cannot revise.
  const messages =
    window === null ? [...history, ...added] : requestWindow(history, { request: state.task, added, size: window });
  let promptTokens: number | undefined;
  if (window === null) {
    // Nothing is sent or appended past the threshold: the summary is its own step, then this one runs again.
    const size = await checkPromptSize(context, state.memory, length, messages, offered, {
      summarizeAt: summarizeAtFor(context, state.summarizeAt),
    });
    if (size.summarize) return { summarize: true };
    promptTokens = size.promptTokens;
  }
  const request = { messages, ...(offered ? { tools: offered } : {}) };
  const response = await callLanguageModel(context, request, { promptTokens, accept: state.accept });
  const calls = response.message.tool_calls ?? [];
  if (calls.length > 0) {
    // A tool call left unanswered would make the history invalid, so a call nothing was offered for stops the run.
    if (!offered)
      throw new AgentqError(
        'TOOL_ERROR',
        `the writer called tools (${calls.map((call) => call.function.name).join(', ')}) although ${finalRound ? 'it was asked to draft without them' : 'this run offers none'}`,
      );
    const toolRounds = state.toolRounds + 1;
    return {
      messages: [...added, response.message],
      turnStarted: true,
      pendingToolCalls: calls,
      toolRounds,
      summarize: false,
    };
  }
  const draft = response.message.content ?? '';
  return {
    messages: [...added, { role: 'assistant', content: draft }],
    turnStarted: true,
    draft,
    iteration: state.iteration + 1,
    summarize: false,
    pendingToolCalls: [],
  };
};

/** `tool`: one tool call of the built-in writer, through the one tool path. */
const toolStep = async (state: Readonly<ReflectState>, context: NodeContext): Promise<ReflectUpdate> => {
  const tools = await runToolsOf(context, state.tools);
  const { message } = await runToolCall(context, { tools, maxAttempts: TOOL_MAX_ATTEMPTS });
  return { messages: [message] };
};

/** The built-in judge: a structured verdict on the latest draft through generateObject. */
const builtInJudge = async (state: Readonly<ReflectState>, context: NodeContext): Promise<ReflectUpdate> => {
  const { object: verdict } = await generateObject(context, {
    name: 'verdict',
    schema: reflectVerdictSchema,
    messages: [
      { role: 'system', content: state.judgeSystem },
      {
        role: 'user',
        content: `Task:\n${state.task}\n\nCriteria: ${state.criteria}\n\nDraft ${state.iteration} of at most ${state.maxIterations}:\n${state.draft}\n\nAnswer with your verdict.`,
      },
    ],
  });
  return applyVerdict(context, state, verdict);
};

/**
 * A verdict on the latest draft: recorded, and (when another draft follows) its critique sent to the
 * writer. A draft that ends the loop (approved, or the last one) passes the output guardrails first: a
 * rewrite becomes the answer; a reprompt counts as a critique while drafts are left, else it blocks.
 */
async function applyVerdict(
  context: NodeContext,
  state: Readonly<ReflectState>,
  verdict: ReflectVerdict,
): Promise<ReflectUpdate> {
  const reviewed = recordVerdict(state, verdict);
  if (!reviewed.ends) return reviewed.update;
  const drafts = state.iteration < state.maxIterations;
  const guarded = await guardAnswer(context, state.guardrails, state.reprompts, state.draft, drafts);
  if (guarded.action === 'pass') return { ...reviewed.update, draft: guarded.text };
  const critique = String(guarded.rejection.content);
  return {
    ...reviewed.update,
    approved: false,
    critique,
    reprompts: guarded.reprompts,
    messages: [{ role: 'user' as const, content: critiqueMessage(critique) }],
  };
}

function recordVerdict(
  state: Readonly<ReflectState>,
  verdict: ReflectVerdict,
): { update: ReflectUpdate; ends: boolean } {
  const review = {
    iteration: state.iteration,
    approved: verdict.approved,
    critique: verdict.approved ? verdict.critique : verdict.critique.trim() || 'Improve the answer.',
  };
  const another = !verdict.approved && state.iteration < state.maxIterations;
  return {
    ends: !another,
    update: {
      approved: verdict.approved,
      reviews: review,
      critique: review.critique,
      verdict: null,
      ...(another ? { messages: [{ role: 'user' as const, content: critiqueMessage(review.critique) }] } : {}),
    },
  };
}

/** A custom writer node: its update, with the draft counted. */
function countDraft(writer: NodeFunction<typeof reflectState>): NodeFunction<typeof reflectState> {
  return async (state, context) => ({ ...(await writer(state, context)), ...drafted(state) });
}

function drafted(state: Readonly<ReflectState>): ReflectUpdate {
  return { iteration: state.iteration + 1, summarize: false };
}

/** A custom judge node: its verdict applied as the built-in judge's is. */
function judgeWith(judge: NodeFunction<typeof reflectState>): NodeFunction<typeof reflectState> {
  return async (state, context) => {
    const update = (await judge(state, context)) ?? {};
    return { ...update, ...(await applyVerdict(context, state, verdictOf(update.verdict, 'judge'))) };
  };
}

/** After a judge subgraph: its verdict (in the state) applied. */
function reviewed(state: Readonly<ReflectState>, context: NodeContext): Promise<ReflectUpdate> {
  return applyVerdict(context, state, verdictOf(state.verdict, 'judge subgraph'));
}

function verdictOf(value: unknown, who: string): ReflectVerdict {
  const parsed = reflectVerdictSchema.safeParse(value);
  if (!parsed.success)
    throw new AgentqError(
      'INTERNAL',
      `reflect: the ${who} wrote no verdict { approved: boolean, critique: string } (got ${JSON.stringify(value)?.slice(0, 200)})`,
    );
  return parsed.data;
}

/** The built-in `reflect@1` (defined last: it uses the built-in writer and judge above). */
export const reflectGraph = createReflectGraph();
