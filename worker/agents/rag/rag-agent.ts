import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, Send, START } from '../../../shared/graph/graph.js';
import { estimatePromptTokens } from '../../../shared/llm/estimate-tokens.js';
import type { RagOutput } from '../../../shared/retrieval/rag-output.js';
import { ragInputSchema } from '../../../shared/retrieval/rag-input.js';
import { planGuardrails, type GuardrailsInput } from '../../../shared/contracts/guardrail-spec.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { runExtraTool, TOOL_MAX_ATTEMPTS } from './run-extra-tool.js';
import { resolveToolHandling, type ToolHandling } from '../tools/tool-handling.js';
import { agentSettingsOf } from '../agent-services.js';
import { summarizeStep } from '../memory/summarize-step.js';
import { extractiveTurn } from './extractive-turn.js';
import { modelTurn } from './model-turn.js';
import { formatSearchResult } from './rag-prompts.js';
import { ragOutputOf } from './rag-output-of.js';
import {
  MAX_PASSAGES,
  pendingSearchOf,
  ragState,
  SEARCH_CANDIDATES,
  type RagMode,
  type RagState,
  type RagUpdate,
} from './rag-state.js';
import { ragTools } from './rag-tools.js';
import { ragVectorStoreOf } from './rag-vector-store-of.js';
import { searchPassages } from './search-passages.js';

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
}

export function createRagAgentGraph({
  name = 'rag-agent',
  version = '1',
  guardrails,
  tools = [],
  toolHandling,
}: RagAgentGraphOptions = {}) {
  const handling = resolveToolHandling(toolHandling);
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
      turnStarted: false,
    }),
    output: (final): RagOutput => ragOutputOf(final),
  })
    .node(
      'model',
      async (current, context) => {
        const mode: RagMode = current.mode ?? (context.services.languageModel ? 'model' : 'extractive');
        const update = mode === 'model' ? await modelTurn(current, context) : await extractiveTurn(current, context);
        logTurn(context, current, update, mode);
        return { ...update, mode };
      },
      { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } },
    )
    .node(
      'search',
      async (current, context) => {
        const request = pendingSearchOf(context.arg);
        context.logger.debug(
          {
            tool: request.tool,
            ...contentOrLength(context, 'arguments', JSON.stringify({ query: request.query })),
            round: request.round,
          },
          'rag-agent: tool call',
        );
        await context.emit('tool-call', { toolCallId: request.callId, tool: request.tool });
        const topK = current.topK ?? agentSettingsOf(context).ragTopK;
        const result = await searchPassages(context, ragVectorStoreOf(context), {
          query: request.query,
          collection: current.collection,
          k: Math.max(SEARCH_CANDIDATES, topK),
          round: request.round,
          lexical: request.lexical === true,
        });
        await context.emit('tool-result', {
          toolCallId: request.callId,
          tool: request.tool,
          passages: result.passages.length,
        });
        const shown = result.passages.slice(0, topK);
        const best = result.passages[0];
        const update: RagUpdate = {
          passages: current.passages.length >= MAX_PASSAGES ? shown : result.passages,
          searches: [
            {
              tool: request.tool,
              query: request.query,
              round: request.round,
              found: result.passages.length,
              retrieval: result.retrieval,
            },
          ],
          reasoning: [
            ...(result.scope ? [`${request.tool}: ${result.scope}`] : []),
            `${request.tool} found ${result.passages.length} passage${result.passages.length === 1 ? '' : 's'}${best ? `, best: "${best.title}"` : ''}`,
          ],
        };
        if (current.mode === 'model')
          update.messages = [
            {
              role: 'tool',
              tool_call_id: request.callId,
              content: formatSearchResult(request.query, shown, result.passages.length),
            },
          ];
        return update;
      },
      // One search after a model turn runs in that turn's job and commits with it (its events too): no
      // job of its own, one transition less per question. A search that needs a paid call (a query
      // embedding through the memo) or fails runs as its own step job, with these attempts.
      { retry: { maxAttempts: 3, initialDelayMs: 500, maxDelayMs: 10_000 }, inline: true },
    )
    .node(
      'summarize',
      async (current, context) => {
        const reserved = await estimatePromptTokens(
          current.turnStarted === false ? [{ role: 'user', content: current.query }] : [],
          ragTools({ searchesLeft: true }),
        );
        return { memory: await summarizeStep(context, current.memory, { reservedTokens: reserved }), summarize: false };
      },
      { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } },
    )
    .node('tool', (current, context) => runExtraTool(current.extraTools, context, handling), {
      retry: { maxAttempts: TOOL_MAX_ATTEMPTS, initialDelayMs: 500, maxDelayMs: 10_000 },
    })
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

/** A debug line per iteration (what the model or the extractive answerer decided), and one at the answer. */
function logTurn(context: NodeContext, current: Readonly<RagState>, update: RagUpdate, mode: RagMode): void {
  if (!context.logger.isLevelEnabled('debug')) return;
  const searches = update.pendingSearches ?? [];
  const tools = update.pendingToolCalls ?? [];
  context.logger.debug(
    {
      mode,
      iteration: update.rounds ?? current.rounds,
      searches: searches.map((search) => contentOrLength(context, 'query', search.query)),
      tools: tools.map((call) => ({
        tool: call.function.name,
        ...contentOrLength(context, 'arguments', call.function.arguments),
      })),
    },
    'rag-agent: iteration',
  );
  if (update.done)
    context.logger.debug(
      { mode, answerChars: (update.answer ?? '').length, cited: update.cited ?? [], searches: current.searches.length },
      'rag-agent: answer',
    );
}

/**
 * A question's or a call's text in a log line, cut at 200 characters, only where content may be recorded
 * (AGENTQ_TRACE_CONTENT, as for spans); otherwise its length alone.
 */
function contentOrLength(context: NodeContext, field: string, text: string): Record<string, string | number> {
  if (!agentSettingsOf(context).traceContent) return { [`${field}Chars`]: text.length };
  return { [field]: text.length <= 200 ? text : `${text.slice(0, 200)}…` };
}
