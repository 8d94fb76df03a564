import { channel } from '../../../shared/graph/channels.js';
import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, START } from '../../../shared/graph/graph.js';
import { callLanguageModel } from '../llm/call-language-model.js';
import { generateObject } from '../llm/generate-object.js';
import { estimateTextTokens } from '../../../shared/llm/estimate-tokens.js';
import { memoryChannel } from '../memory/memory-state.js';
import { messageWindow } from '../memory/message-window.js';
import { loadPromptHistory } from '../memory/prompt-history.js';
import { checkPromptSize, summarizeAtFor, summarizeStep } from '../memory/summarize-step.js';
import type { Message } from '../../../shared/contracts/run-record.js';
import { memoryChoiceOf } from '../schemas/react-agent-input.js';
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

/**
 * The `reflect` graph: `write` (the writer drafts, one model call per step) and `judge` (a structured
 * verdict `{approved, critique}` through `generateObject`) loop until the judge approves or
 * `maxIterations` drafts were written. A critique goes back to the writer as a user message, so the
 * run's history is the writer's conversation; the verdicts are in the state and the output.
 *
 * Memory: when the writer's prompt would pass AGENTQ_SUMMARIZE_AT of the context window (or the run's
 * `memory.summarizeAt`), `write` sends nothing and routes to `summarize`, its own checkpointed step,
 * which folds older drafts and critiques into a summary; the task stays verbatim in the system message.
 * `memory: {window: N}` shows the last N messages instead.
 */
export const reflectGraph = defineGraph({
  name: 'reflect',
  version: '1',
  input: reflectInputSchema,
  state: {
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
    /** Which older messages the writer's prompts show as a summary (shared/memory). */
    memory: memoryChannel(),
    /** The writer's prompt is too long: the next step summarises the history. */
    summarize: channel.replace(false),
  },
  initialState: (input) => ({
    task: input.task,
    maxIterations: input.maxIterations,
    ...(input.criteria === undefined ? {} : { criteria: input.criteria }),
    ...(input.writerSystem === undefined ? {} : { writerSystem: input.writerSystem }),
    ...(input.judgeSystem === undefined ? {} : { judgeSystem: input.judgeSystem }),
    ...memoryChoiceOf(input.memory),
  }),
  output: (state): ReflectOutput => ({
    answer: state.draft,
    approved: state.approved,
    iterations: state.iteration,
    reviews: state.reviews,
  }),
})
  .node(
    'write',
    async (state, context) => {
      // At most 2 × maxIterations (≤ 20) messages, but drafts can be long: past the threshold they are summarised.
      // With a window nothing is ever summarised (upTo stays 0): this is the whole history.
      const window = state.messageWindow;
      const { messages: history, length } = await loadPromptHistory(context, state.memory, state.task);
      const added: Message[] =
        length === 0
          ? [
              { role: 'system', content: state.writerSystem },
              { role: 'user', content: state.task },
            ]
          : [];
      // A window keeps the system prompt and the task in front: a writer that lost the task cannot revise.
      const shown = window === null ? history : [...history.slice(0, 2), ...messageWindow(history.slice(2), window)];
      const messages = [...shown, ...added];
      let promptTokens: number | undefined;
      if (window === null) {
        // Nothing is sent or appended past the threshold: the summary is its own step, then this one runs again.
        const size = await checkPromptSize(context, state.memory, length, messages, undefined, {
          summarizeAt: summarizeAtFor(context, state.summarizeAt),
        });
        if (size.summarize) return { summarize: true };
        promptTokens = size.promptTokens;
      }
      const response = await callLanguageModel(
        context,
        { messages },
        promptTokens === undefined ? {} : { promptTokens },
      );
      const draft = response.message.content ?? '';
      return {
        messages: [...added, { role: 'assistant', content: draft }],
        draft,
        iteration: state.iteration + 1,
        summarize: false,
      };
    },
    RETRY,
  )
  .node(
    'summarize',
    async (state, context) => {
      // The task goes back into the system message after a summary (promptView's anchor): room for it.
      const reservedTokens = await estimateTextTokens(state.task);
      return {
        memory: await summarizeStep(context, state.memory, {
          reservedTokens,
          summarizeAt: summarizeAtFor(context, state.summarizeAt),
        }),
        summarize: false,
      };
    },
    RETRY,
  )
  .node(
    'judge',
    async (state, context) => {
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
      const review = {
        iteration: state.iteration,
        approved: verdict.approved,
        critique: verdict.approved ? verdict.critique : verdict.critique.trim() || 'Improve the answer.',
      };
      const another = !verdict.approved && state.iteration < state.maxIterations;
      return {
        approved: verdict.approved,
        reviews: review,
        ...(another ? { messages: [{ role: 'user' as const, content: critiqueMessage(review.critique) }] } : {}),
      };
    },
    RETRY,
  )
  .edge(START, 'write')
  .route('write', (state) => (state.summarize ? 'summarize' : 'judge'), ['summarize', 'judge'])
  .edge('summarize', 'write')
  .route('judge', (state) => (state.approved || state.iteration >= state.maxIterations ? END : 'write'), ['write', END])
  .build();
