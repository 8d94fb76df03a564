import { estimatePromptTokens } from '../../../shared/llm/estimate-tokens.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { agentSettingsOf } from '../agent-services.js';
import { summarizeStep } from '../memory/summarize-step.js';
import { extractiveTurn } from './extractive-turn.js';
import { modelTurn } from './model-turn.js';
import { formatSearchResult, retrievedContentNote } from './rag-prompts.js';
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
import { rerankerOf, rerankPassages } from './rerank-passages.js';
import type { NodeFunction } from '../../../shared/graph/graph.js';

type RagNode = NodeFunction<typeof ragState>;

/** `model`: one decision, by the language model or (without one) the extractive answerer. */
export const ragModelNode: RagNode = async (current, context) => {
  const mode: RagMode = current.mode ?? (context.services.languageModel ? 'model' : 'extractive');
  const update = mode === 'model' ? await modelTurn(current, context) : await extractiveTurn(current, context);
  logTurn(context, current, update, mode);
  // Fixed by the first step, as the mode: the worker that finishes the run lists what the run was started with.
  return { ...update, mode, sourcesMode: current.sourcesMode ?? agentSettingsOf(context).ragSources };
};

/** `search`: one search the model decided on, scoped to the run's tenant and collection. */
export const ragSearchNode: RagNode = async (current, context) => {
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
  const result = await searchPassages(context, await ragVectorStoreOf(context), {
    query: request.query,
    collection: current.collection,
    k: Math.max(SEARCH_CANDIDATES, topK),
    round: request.round,
    lexical: request.lexical === true,
  });
  const reranker = rerankerOf(context);
  const passages = reranker
    ? await rerankPassages(reranker, request.query, result.passages, { abortSignal: context.abortSignal })
    : result.passages;
  await context.emit('tool-result', {
    toolCallId: request.callId,
    tool: request.tool,
    passages: passages.length,
  });
  const shown = passages.slice(0, topK);
  const best = passages[0];
  const update: RagUpdate = {
    passages: current.passages.length >= MAX_PASSAGES ? shown : passages,
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
      `${request.tool} found ${passages.length} passage${passages.length === 1 ? '' : 's'}${best ? `, best: "${best.title}"` : ''}${reranker && passages.length > 1 ? ` (reranked: ${reranker.name})` : ''}`,
    ],
  };
  if (current.mode === 'model') {
    const content = formatSearchResult(request.query, shown, passages.length);
    // Not stored: the history (and a conversation's next turn) keeps a note; this run's prompts read the result from state.
    if (current.storeRetrievedContent === false) update.retrievedContent = { [request.callId]: content };
    update.messages = [
      {
        role: 'tool',
        tool_call_id: request.callId,
        content: current.storeRetrievedContent === false ? retrievedContentNote(request.query) : content,
      },
    ];
  }
  return update;
};

/** `summarize`: folds older history into a summary, leaving room for the question and the tools. */
export const ragSummarizeNode: RagNode = async (current, context) => {
  const reserved = await estimatePromptTokens(
    current.turnStarted === false ? [{ role: 'user', content: current.query }] : [],
    ragTools({ searchesLeft: true }),
  );
  return { memory: await summarizeStep(context, current.memory, { reservedTokens: reserved }), summarize: false };
};

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
