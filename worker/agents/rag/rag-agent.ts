import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, Send, START } from '../../../shared/graph/graph.js';
import type { RagOutput } from '../../../shared/retrieval/rag-output.js';
import { ragInputSchema } from '../../../shared/retrieval/rag-input.js';
import { planGuardrails, type GuardrailsInput } from '../../../shared/contracts/guardrail-spec.js';
import { runExtraTool, TOOL_MAX_ATTEMPTS } from './run-extra-tool.js';
import { resolveToolHandling, type ToolHandling } from '../tools/tool-handling.js';
import { ragOutputOf } from './rag-output-of.js';
import { ragState } from './rag-state.js';
import { ragModelNode, ragSearchNode, ragSummarizeNode } from './rag-agent-nodes.js';
import { answerOptionsOf, withAnswerCache } from './answer-cache-turn.js';
import { transformingNodes, type ChatRequestTransformer } from '../llm/chat-request-transformer.js';

export { MAX_PASSAGES, MAX_SEARCHES_PER_ROUND, PASSAGES_SHOWN, SEARCH_CANDIDATES } from './rag-state.js';

/**
 * The `rag-agent` graph: agentic RAG with citations over the caller's ingested documents.
 *
 * `model` decides (one step): with a language model, one model call offered `search`,
 * `refine_and_search` and `final_answer`; without one (LLM_MODEL unset), the built-in extractive
 * answerer (docs/guides/batch-qa.md). Each search it decides on is its own `search` step (parallel searches of
 * one decision run as one superstep through `Send`), scoped to the run's tenant; then `model` decides
 * again. `max_iterations` bounds the search rounds: after the last one the model is offered only
 * `final_answer`. Every citation of the answer must name a passage some search of this run returned;
 * any other is dropped and noted in `reasoning_steps`.
 *
 * Guardrails (as react-agent's): the input stage checks the question in the first `model` step, the
 * output stage the final answer (a reprompt sends the model back with the rejection; the extractive
 * answerer cannot be asked again, so there a reprompt blocks). Extra tools (`tools`, names in the
 * worker's registry) are offered beside the three while search rounds are left; each call is a `tool`
 * step, run in the same superstep as that turn's searches.
 */
/** How a rag-agent graph is built: its name and what its runs get unless their input says otherwise. */
export interface RagAgentGraphOptions {
  /** @default 'rag-agent' */
  name?: string;
  /** @default '1' */
  version?: string;
  /** Input guardrails on the question, output guardrails on the answer (a run's `guardrails` replaces a stage's list). @default none */
  guardrails?: GuardrailsInput;
  /** Tools of the worker's registry offered beside the three (a run's `tools` replaces them). @default none */
  tools?: readonly string[];
  /** What happens when an extra tool is unknown, sent bad arguments or fails (react-agent's). @default tell the model */
  toolHandling?: ToolHandling;
  /**
   * Offer the model a `plan` tool before its first search: it lists the sub-questions of a many-part
   * question, kept in the state's `plan` and in `reasoning_steps`; the first plan of a run costs no
   * search round. With a language model only (the extractive answerer plans its own searches). @default false
   */
  planning?: boolean;
  /** Rewrites each model request of the graph's runs before it is sent (then the worker's transformer runs). @default none */
  chatRequestTransformer?: ChatRequestTransformer;
  /**
   * Keep search results in the run's stored history, where a conversation's next turn reads them. False: the
   * model reads them for this run's turn only; the history keeps a one-line note per search. @default true
   */
  storeRetrievedContent?: boolean;
}

export function createRagAgentGraph({
  name = 'rag-agent',
  version = '1',
  guardrails,
  tools = [],
  toolHandling,
  planning = false,
  chatRequestTransformer,
  storeRetrievedContent = true,
}: RagAgentGraphOptions = {}) {
  const handling = resolveToolHandling(toolHandling);
  const node = transformingNodes(chatRequestTransformer);
  return defineGraph({
    name,
    version,
    input: ragInputSchema,
    state: ragState,
    initialState: (input) => ({
      guardrails: planGuardrails(guardrails, input.guardrails),
      extraTools: [...(input.tools ?? tools)],
      query: input.query,
      collection: input.collection,
      maxIterations: input.max_iterations,
      citations: input.citations,
      topK: input.top_k ?? null,
      sourcesMode: input.sources ?? null,
      planning,
      turnStarted: false,
      storeRetrievedContent,
      answerCache: input.answer_cache ? { graph: name, graphVersion: version, options: answerOptionsOf(input) } : null,
    }),
    output: (final): RagOutput =>
      final.cachedAnswer
        ? { ...final.cachedAnswer.output, cached: { from: final.cachedAnswer.from, at: final.cachedAnswer.at } }
        : ragOutputOf(final),
  })
    .node('model', node(withAnswerCache(ragModelNode)), {
      retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 },
    })
    .node(
      'search',
      ragSearchNode,
      // One search after a model turn runs in that turn's job and commits with it (its events too): no
      // job of its own, one transition less per question. A search that needs a paid call (a query
      // embedding through the memo) or fails runs as its own step job, with these attempts.
      { retry: { maxAttempts: 3, initialDelayMs: 500, maxDelayMs: 10_000 }, inline: true },
    )
    .node('summarize', node(ragSummarizeNode), { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } })
    .node(
      'tool',
      node((current, context) => runExtraTool(current.extraTools, context, handling)),
      {
        retry: { maxAttempts: TOOL_MAX_ATTEMPTS, initialDelayMs: 500, maxDelayMs: 10_000 },
      },
    )
    .edge(START, 'model')
    .route(
      'model',
      (current) =>
        current.summarize
          ? 'summarize'
          : current.done
            ? END
            : current.pendingSearches.length > 0 || current.pendingToolCalls.length > 0
              ? [
                  ...current.pendingSearches.map((search) => new Send('search', search)),
                  ...current.pendingToolCalls.map((call) => new Send('tool', call)),
                ]
              : 'model',
      ['search', 'tool', 'model', 'summarize', END],
    )
    .edge('search', 'model')
    .edge('tool', 'model')
    .edge('summarize', 'model')
    .build();
}

/** The built-in `rag-agent@1`. */
export const ragAgentGraph = createRagAgentGraph();
