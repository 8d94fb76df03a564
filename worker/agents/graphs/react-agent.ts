import { AgentqError } from '../../../shared/contracts/errors.js';
import type { OnBusy } from '../../../shared/contracts/job-schema.js';
import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, Send, START } from '../../../shared/graph/graph.js';
import type { GuardrailsInput } from '../../../shared/contracts/guardrail-spec.js';
import { planGuardrails } from '../../../shared/contracts/guardrail-spec.js';
import { guardrailRegistryOf } from '../guardrails/guardrail-registry-of.js';
import { checkDirectAnswer } from '../guardrails/check-direct-answer.js';
import { guardAnswer } from '../guardrails/guard-text.js';
import { runGuardrails } from '../guardrails/run-guardrails.js';
import { runSettingsOf } from './react-run-settings.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';
import { runToolsOf, type ToolProvider } from '../tools/tool-provider.js';
import type { BeforeToolCall } from '../tools/before-tool-call.js';
import { reactTurnOf, type MessageTemplates } from './react-turn.js';
import type { AssistantMessage, ImageOutput } from '../../../shared/ports/language-model.js';
import {
  memoryChoiceOf,
  reactAgentInputSchema,
  type MemoryKeep,
  type ReactAgentOutput,
} from '../schemas/react-agent-input.js';
import { type ToolHandling } from '../tools/tool-handling.js';
import type { RetrieveOptions } from '../schemas/retrieve-options.js';
import { retrievalNode, sourcesOf, type Retrieval } from '../retrieval-node.js';
import { transformingNodes, type ChatRequestTransformer } from '../llm/chat-request-transformer.js';

import {
  reactAgentChannels,
  reactModelNode,
  reactSummarizeNode,
  reactToolNode,
  TOOL_MAX_ATTEMPTS,
} from './react-agent-nodes.js';

export { DEFAULT_REACT_SYSTEM_PROMPT, FINAL_ANSWER_REQUEST } from './react-agent-nodes.js';

/** How a react-agent graph is built: its name and what its runs get unless their input says otherwise. */
export interface ReactAgentGraphOptions {
  /** @default 'react-agent' */
  name?: string;
  /** @default '1' */
  version?: string;
  /** Unknown tools, bad arguments, failing tools: policy names or your functions. @default tell the model (retry a retryable tool error first) */
  toolHandling?: ToolHandling;
  /** Input and output guardrails (a run's `guardrails` replaces a stage's list). @default none */
  guardrails?: GuardrailsInput;
  /** `{ window: N }`: prompts show the last N messages; `{ summarizeAt: x }`: summarise past that share (a run's `memory` overrides). @default summarise past AGENTQ_SUMMARIZE_AT */
  memory?: { window?: number; summarizeAt?: number; keep?: MemoryKeep };
  /** System and user message templates with `{{name}}` variables (the run's `variables`). @default none */
  templates?: MessageTemplates;
  /** Sees each tool call's arguments before it runs; may veto or rewrite it. @default none */
  beforeToolCall?: BeforeToolCall;
  /** Tools chosen for each run from its input, beside the fixed ones. @default none */
  toolProvider?: ToolProvider;
  /** A conversation's new turn while the previous one is unfinished: wait, cancel it, or fail (a run's `onBusy` wins). @default 'queue' */
  onBusy?: OnBusy;
  /** Rewrites each model request of the graph's runs before it is sent (then the worker's transformer runs). @default none */
  chatRequestTransformer?: ChatRequestTransformer;
  /**
   * With `retrieve`: the passages join the stored question, where a conversation's next turn reads them.
   * False: the model reads them throughout this run; the stored question is the query alone. @default true
   */
  storeRetrievedContent?: boolean;
}

/**
 * A `react-agent` graph: a system prompt, the user's query, then a loop of `model` (one LLM call
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
export function createReactAgentGraph({
  name = 'react-agent',
  version = '1',
  toolHandling,
  guardrails,
  memory,
  onBusy,
  templates,
  beforeToolCall,
  toolProvider,
  chatRequestTransformer,
  storeRetrievedContent = true,
}: ReactAgentGraphOptions = {}) {
  // Every node, not only those that call the model here: a guardrail or a tool may call one too.
  const node = transformingNodes(chatRequestTransformer);
  const runTools = (
    context: NodeContext,
    state: { tools: string[] | null; providerInput: unknown },
  ): Promise<AnyTool[]> => runToolsOf(context, state.tools ?? undefined, toolProvider, state.providerInput);
  return (
    defineGraph({
      name,
      version,
      ...(onBusy === undefined ? {} : { onBusy }),
      input: reactAgentInputSchema,
      state: reactAgentChannels(),
      initialState: (input) => {
        const turn = reactTurnOf(input, templates);
        return {
          query: turn.query,
          queryImages: turn.images,
          system: turn.system,
          providerInput: toolProvider ? input : null,
          memoryKeep: input.memory?.keep ?? memory?.keep ?? null,
          tools: input.tools ?? null,
          turnStarted: false,
          settings: runSettingsOf(input),
          guardrails: planGuardrails(guardrails, input.guardrails),
          retrieveOptions: input.retrieve ?? null,
          storeRetrievedContent,
          ...memoryChoiceOf(input.memory ?? memory),
        };
      },
      output: reactOutputOf,
    })
      .node(
        'input_guard',
        node(async (state, context) => {
          // Binding both stages (and selecting the tools) here fails a run naming an unknown output guardrail
          // or tool before any paid check or model call.
          const bound = guardrailRegistryOf(context).bind(state.guardrails);
          await runTools(context, state);
          const verdict = await runGuardrails(context, 'input', bound.input, state.query);
          return verdict.text === state.query ? {} : { query: verdict.text };
        }),
      )
      .node('model', node(reactModelNode(runTools)), {
        retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 },
      })
      .node('tool', node(reactToolNode({ runTools, toolHandling, beforeToolCall })), {
        retry: { maxAttempts: TOOL_MAX_ATTEMPTS, initialDelayMs: 500, maxDelayMs: 10_000 },
      })
      .node('summarize', node(reactSummarizeNode(runTools)), {
        retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 },
      })
      .node(
        'output_guard',
        node(async (state, context) => {
          const draft = state.draft;
          if (!draft && state.directAnswer !== null) {
            const bound = guardrailRegistryOf(context).bind(state.guardrails);
            return checkDirectAnswer(context, state, bound.output, state.directAnswer);
          }
          if (!draft) throw new AgentqError('INTERNAL', 'react-agent: output_guard ran without an answer to check');
          // The answer joins the history as the guardrails leave it (rewritten, or with the rejection).
          const guarded = await guardAnswer(context, state.guardrails, state.reprompts, draft.content ?? '');
          const checked: AssistantMessage = { ...draft, content: guarded.text };
          if (guarded.action === 'pass') return { messages: [checked], answer: guarded.text, draft: null };
          return {
            messages: [checked, guarded.rejection],
            draft: null,
            reprompts: guarded.reprompts,
            reprompting: true,
          };
        }),
      )
      .node(
        'retrieve',
        node(async (state, context) => {
          // The run's tools and guardrails are checked before the search too, not only at the first model call.
          await runTools(context, state);
          guardrailRegistryOf(context).bind(state.guardrails);
          return retrieveForQuery(state, context);
        }),
      )
      .route(START, (state) => (state.guardrails.input.length > 0 ? 'input_guard' : afterInput(state)), [
        'input_guard',
        'retrieve',
        'model',
      ])
      .route('input_guard', afterInput, ['retrieve', 'model'])
      .edge('retrieve', 'model')
      .route(
        'model',
        (state) =>
          state.summarize
            ? 'summarize'
            : state.pendingToolCalls.length > 0
              ? state.pendingToolCalls.map((call) => new Send('tool', call))
              : state.draft
                ? 'output_guard'
                : END,
        ['summarize', 'tool', 'output_guard', END],
      )
      // A returnDirect tool's result is the answer, so it passes the output guardrails like a model's answer.
      .route(
        'tool',
        (state) => (state.directAnswer === null ? 'model' : state.guardrails.output.length > 0 ? 'output_guard' : END),
        ['model', 'output_guard', END],
      )
      .edge('summarize', 'model')
      .route('output_guard', (state) => (state.reprompting ? 'model' : END), ['model', END])
      .build()
  );
}

/** A run's output: the answer (a returnDirect tool's result, else the model's), the retrieved sources, the model's images. */
function reactOutputOf(state: {
  directAnswer: string | null;
  answer: string;
  retrieval: Retrieval | null;
  images: ImageOutput[];
}): ReactAgentOutput {
  return {
    answer: state.directAnswer ?? state.answer,
    ...(state.retrieval ? { sources: sourcesOf(state.retrieval) } : {}),
    ...(state.images.length > 0 ? { images: state.images } : {}),
  };
}

/** The built-in `react-agent@1`. */
export const reactAgentGraph = createReactAgentGraph();

const retrieveForQuery = retrievalNode<{ query: string; retrieveOptions: RetrieveOptions | null }>({
  query: (state) => state.query,
  options: (state) => state.retrieveOptions!,
});

/** Retrieval (searching the checked query) comes after the input guardrails, before the first model call. */
function afterInput(state: { retrieveOptions: RetrieveOptions | null }): 'retrieve' | 'model' {
  return state.retrieveOptions ? 'retrieve' : 'model';
}
