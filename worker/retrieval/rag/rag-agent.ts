import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { channel, type StateOf } from '../../../shared/graph/channels.js';
import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, Send, START, type NodeResult } from '../../../shared/graph/graph.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { callLanguageModel } from '../../agents/llm/call-language-model.js';
import { estimatePromptTokens } from '../../../shared/llm/estimate-tokens.js';
import { agentSettingsOf, embedderOf } from '../../agents/agent-services.js';
import { memoryChannel } from '../../agents/memory/memory-state.js';
import { loadPromptHistory } from '../../agents/memory/prompt-history.js';
import { checkPromptSize, summarizeStep } from '../../agents/memory/summarize-step.js';
import type { RagOutput } from '../../../shared/retrieval/rag-output.js';
import type { Message } from '../../../shared/contracts/run-record.js';
import { ragInputSchema } from '../../../shared/retrieval/rag-input.js';
import { checkCitations } from './check-citations.js';
import { DENSE_MATCH_NOTE, denseSentenceMatch } from './dense-sentence-match.js';
import { extractAnswer } from './extract-answer.js';
import { planExtractiveRound } from './plan-extractive-round.js';
import { rankPassages, type DenseMatch, type RankedPassage } from './rank-passages.js';
import { formatSearchResult, RAG_FINAL_ANSWER_REQUEST, RAG_SEARCH_FIRST, ragSystemPrompt } from './rag-prompts.js';
import { ragOutputOf } from './rag-output-of.js';
import { parseRagToolCall, ragTools, type RagToolCall } from './rag-tools.js';
import { ragVectorStoreOf } from './rag-vector-store-of.js';
import { mergePassages, type RetrievedPassage } from './retrieved-passage.js';
import type { SearchLogEntry } from './search-log-entry.js';
import { searchPassages } from './search-passages.js';

/** Passages each search fetches: the pool answers are ranked and extracted from. @default 20 */
export const SEARCH_CANDIDATES = 20;
/** Passages of each search the model reads (the best ones) unless AGENTQ_RAG_TOP_K or a run's `top_k` says otherwise. @default 6 */
export const PASSAGES_SHOWN = 6;
/** Searches one model turn may run; further calls in that turn get an error result. @default 4 */
export const MAX_SEARCHES_PER_ROUND = 4;
/** Once the run holds this many passages, a search keeps only those it shows the model (bounded state). @default 150 */
export const MAX_PASSAGES = 150;

/** How the run answers: with the worker's language model, or with the built-in extractive answerer. */
type RagMode = 'model' | 'extractive';

/** A search a `model` step decided on; one `search` step runs it. */
const pendingSearchSchema = z.object({
  callId: z.string(),
  tool: z.enum(['search', 'refine_and_search']),
  query: z.string().min(1),
  round: z.number().int().min(1),
  /** Words only, no dense side: the extractive answerer's refined query is key words and names, not a sentence to embed. @default false */
  lexical: z.boolean().optional(),
});
type PendingSearch = z.infer<typeof pendingSearchSchema>;

const state = {
  query: channel.replace(''),
  collection: channel.replace('default'),
  maxIterations: channel.replace(3),
  citations: channel.replace(false),
  /** The run's `top_k`; null: the worker's AGENTQ_RAG_TOP_K. */
  topK: channel.replace<number | null>(null),
  /** Fixed by the first step, so a run keeps its mode whichever worker runs its later steps. */
  mode: channel.replace<RagMode | null>(null),
  modelName: channel.replace(''),
  /** The searches of the last decision, fanned out to `search` steps. */
  pendingSearches: channel.replace<PendingSearch[]>([]),
  /** Search rounds so far (a decision that ran searches, or a model turn that tried to). */
  rounds: channel.replace(0),
  passages: channel.custom<RetrievedPassage[], RetrievedPassage[]>(mergePassages, () => []),
  searches: channel.append<SearchLogEntry>(),
  reasoning: channel.append<string>(),
  /** The answer with `[id]` markers of the passages it cites. */
  answer: channel.replace(''),
  cited: channel.replace<string[]>([]),
  /** The extractive answer's dense sentence match of its best passages (passage id → similarity); empty when not asked. */
  denseMatch: channel.replace<DenseMatch>({}),
  /** The weight it was ranked with (AGENTQ_RAG_DENSE_WEIGHT when the answer was made), so the output ranks the same. */
  denseWeight: channel.replace(0),
  done: channel.replace(false),
  /** The model step added this run's question; false until then (a conversation's run starts with earlier turns); null in runs admitted before this key existed. */
  turnStarted: channel.replace<boolean | null>(null),
  /** Which older messages prompts show as a summary (shared/memory); conversations seed it. */
  memory: memoryChannel(),
  /** The prompt is too long: the next step summarises the history. */
  summarize: channel.replace(false),
};
type RagState = StateOf<typeof state>;
type RagUpdate = NodeResult<typeof state>;

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
 */
export const ragAgentGraph = defineGraph({
  name: 'rag-agent',
  version: '1',
  input: ragInputSchema,
  state,
  initialState: (input) => ({
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
      return { ...update, mode };
    },
    { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } },
  )
  .node(
    'search',
    async (current, context) => {
      const request = pendingSearchOf(context.arg);
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
    { retry: { maxAttempts: 3, initialDelayMs: 500, maxDelayMs: 10_000 } },
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
  .edge(START, 'model')
  .route(
    'model',
    (current) =>
      current.summarize
        ? 'summarize'
        : current.done
          ? END
          : current.pendingSearches.length > 0
            ? current.pendingSearches.map((search) => new Send('search', search))
            : 'model',
    ['search', 'model', 'summarize', END],
  )
  .edge('search', 'model')
  .edge('summarize', 'model')
  .build();

/**
 * The extractive answerer's decision: search, refine once when the first results are weak, then
 * answer — from the passages ranked again with the dense sentence match when the local model is there.
 */
async function extractiveTurn(current: Readonly<RagState>, context: NodeContext): Promise<RagUpdate> {
  const linkBonus = current.rounds >= 2 ? 1 : 0;
  const lexical = rankPassages(current.query, current.passages, { linkBonus });
  const move = planExtractiveRound({
    question: current.query,
    rounds: current.rounds,
    maxIterations: current.maxIterations,
    ranked: lexical,
  });
  if (move.kind === 'search') {
    const round = current.rounds + 1;
    const call = move.tool === 'search' ? { query: move.query } : { refined_query: move.query };
    return {
      modelName: 'extractive',
      rounds: round,
      pendingSearches: [
        {
          callId: `extractive-r${round}`,
          tool: move.tool,
          query: move.query,
          round,
          ...(move.tool === 'refine_and_search' ? { lexical: true } : {}),
        },
      ],
      reasoning: [
        ...(move.tool === 'refine_and_search'
          ? [
              `Weak results: ${move.reason}; refining with the question's key words and the names its best passages mention`,
            ]
          : []),
        `Calling ${move.tool}: ${JSON.stringify(call)}`,
      ],
    };
  }
  const denseWeight = agentSettingsOf(context).ragDenseWeight;
  const { denseMatch, failure } =
    denseWeight > 0 ? await compareMeaning(context, current.query, lexical) : { denseMatch: {}, failure: [] };
  const ranked =
    Object.keys(denseMatch).length > 0
      ? rankPassages(current.query, current.passages, { linkBonus, denseMatch, denseWeight })
      : lexical;
  const { sentences, notes, lead } = extractAnswer(ranked, {
    followLinks: current.rounds >= 2,
    question: current.query,
  });
  const body = sentences.map(({ sentence, passageId }) => `${sentence} [${passageId}]`).join(' ');
  const answer =
    lead || body
      ? [lead, body].filter(Boolean).join(' ')
      : `No passage in collection '${current.collection}' matches the question.`;
  return {
    modelName: 'extractive',
    done: true,
    pendingSearches: [],
    answer,
    cited: [...new Set(sentences.map((sentence) => sentence.passageId))],
    denseMatch,
    denseWeight,
    reasoning: [`Answering: ${move.reason}`, ...failure, ...denseNote(lexical, ranked, denseMatch), ...notes],
  };
}

/**
 * The dense sentence match, or none with the reason when the model fails: the comparison only refines
 * a ranking the words already give, so a failing model costs the answer that refinement, not the run.
 * Cancellation, deadlines and shutdown (the step's signal) still end the step.
 */
async function compareMeaning(
  context: NodeContext,
  question: string,
  lexical: readonly RankedPassage[],
): Promise<{ denseMatch: DenseMatch; failure: string[] }> {
  try {
    return { denseMatch: await denseSentenceMatch(context, embedderOf(context), question, lexical), failure: [] };
  } catch (error) {
    if (context.abortSignal.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    context.logger.warn(
      { err: error },
      'rag-agent: the dense sentence comparison failed; answering from the lexical ranking',
    );
    return {
      denseMatch: {},
      failure: [`the meaning comparison failed (${message.slice(0, 200)}); ranked by words alone`],
    };
  }
}

/** What the dense sentence match did, for reasoning_steps (nothing when it was not asked). */
function denseNote(
  lexical: readonly RankedPassage[],
  ranked: readonly RankedPassage[],
  denseMatch: Readonly<DenseMatch>,
): string[] {
  if (Object.keys(denseMatch).length === 0) return [];
  const before = lexical[0]!;
  const after = ranked[0]!;
  const compared = `${DENSE_MATCH_NOTE} the ${Object.keys(denseMatch).length} best passages' likeliest sentences with the question`;
  // Passages compared share a title as often as not: the citation id tells them apart.
  const name = (passage: RankedPassage) => `"${passage.title}" [${passage.id}]`;
  return [
    before.id === after.id
      ? `${compared}: ${name(after)} stays first`
      : `${compared}: ${name(after)} goes before ${name(before)}`,
  ];
}

/** One model call and what follows from it: searches to run, or the final answer (citations checked). */
async function modelTurn(current: Readonly<RagState>, context: NodeContext): Promise<RagUpdate> {
  const { messages: history, length } = await loadPromptHistory(context, current.memory);
  // A run with a conversationId starts from the conversation's earlier turns: its own question is still to add.
  const startTurn = current.turnStarted === false || (current.turnStarted === null && length === 0);
  const added: Message[] = !startTurn
    ? []
    : [
        ...(length === 0 ? [{ role: 'system' as const, content: ragSystemPrompt(current.maxIterations) }] : []),
        { role: 'user', content: current.query },
      ];
  const searchesLeft = current.rounds < current.maxIterations;
  if (!searchesLeft) added.push({ role: 'user', content: RAG_FINAL_ANSWER_REQUEST });
  const messages = [...history, ...added];
  const tools = ragTools({ searchesLeft });
  // Past AGENTQ_SUMMARIZE_AT of the context window: nothing is sent; the summary is its own step, then this one runs again.
  const size = await checkPromptSize(context, current.memory, length, messages, tools);
  if (size.summarize) return { summarize: true, pendingSearches: [] };
  // The answer comes as final_answer's arguments: its text streams to live subscribers as it is written.
  const response = await callLanguageModel(
    context,
    { messages, tools },
    {
      streamToolField: { tool: 'final_answer', field: 'answer' },
      ...(size.promptTokens === undefined ? {} : { promptTokens: size.promptTokens }),
    },
  );
  const message = response.message;
  const base: RagUpdate = {
    modelName: response.model || (context.services.languageModel?.modelId ?? 'unknown'),
    turnStarted: true,
    summarize: false,
  };
  const calls = (message.tool_calls ?? []).map(parseRagToolCall);
  const searched = current.searches.length > 0;

  if (calls.length === 0) {
    if (!searched && searchesLeft) {
      // An answer before any search rests on nothing retrieved: ask once more, spending a round.
      return {
        ...base,
        messages: [...added, message, { role: 'user', content: RAG_SEARCH_FIRST }],
        rounds: current.rounds + 1,
        pendingSearches: [],
        reasoning: ['The model answered before searching; asked it to search first'],
      };
    }
    return { ...base, ...finish(current, message.content ?? '', [], [...added, message]) };
  }

  const final = calls.find((call): call is Extract<RagToolCall, { kind: 'final' }> => call.kind === 'final');
  if (final && (searched || !searchesLeft)) {
    const replies = calls.map((call) =>
      toolReply(call.callId, call === final ? 'Answer recorded.' : 'Not run: the answer was given in this turn.'),
    );
    return { ...base, ...finish(current, final.answer, final.citations, [...added, message, ...replies]) };
  }
  if (!searchesLeft) {
    // Only final_answer was offered; the model called something else. History stays valid (I3), and the
    // run still ends with an answer grounded in what it retrieved.
    const replies = calls.map((call) => toolReply(call.callId, 'Not run: no search rounds are left.'));
    return { ...base, ...extractiveFallback(current, [...added, message, ...replies]) };
  }

  const replies: Message[] = [];
  const pendingSearches: PendingSearch[] = [];
  const reasoning: string[] = [];
  const round = current.rounds + 1;
  for (const call of calls) {
    if (call.kind === 'invalid') replies.push(toolReply(call.callId, call.error));
    else if (call.kind === 'final') replies.push(toolReply(call.callId, RAG_SEARCH_FIRST));
    else if (pendingSearches.length >= MAX_SEARCHES_PER_ROUND)
      replies.push(
        toolReply(call.callId, `Error: at most ${MAX_SEARCHES_PER_ROUND} searches per turn; this one was not run.`),
      );
    else {
      pendingSearches.push({ callId: call.callId, tool: call.tool, query: call.query, round });
      reasoning.push(`Calling ${call.tool}: ${call.arguments}`);
    }
  }
  return { ...base, messages: [...added, message, ...replies], pendingSearches, rounds: round, reasoning };
}

/** The end of a model run: the answer with only citations of passages this run retrieved. */
function finish(
  current: Readonly<RagState>,
  answer: string,
  citations: readonly string[],
  messages: Message[],
): RagUpdate {
  const checked = checkCitations(answer, citations, current.passages);
  const reasoning = checked.dropped.map(
    (id) => `Dropped citation [${id}]: no passage with that id was retrieved in this run`,
  );
  if (checked.cited.length === 0) reasoning.push('The answer cites no retrieved passage');
  return { messages, done: true, pendingSearches: [], answer: checked.answer, cited: checked.cited, reasoning };
}

function extractiveFallback(current: Readonly<RagState>, messages: Message[]): RagUpdate {
  const ranked = rankPassages(current.query, current.passages, { linkBonus: current.rounds >= 2 ? 1 : 0 });
  const { sentences, notes } = extractAnswer(ranked, { followLinks: current.rounds >= 2 });
  return {
    messages,
    done: true,
    pendingSearches: [],
    answer:
      sentences.map(({ sentence, passageId }) => `${sentence} [${passageId}]`).join(' ') ||
      'No answer: the model gave none within max_iterations and nothing was retrieved.',
    cited: [...new Set(sentences.map((sentence) => sentence.passageId))],
    reasoning: [
      'The model gave no final answer after the last search round; answered extractively from the retrieved passages',
      ...notes,
    ],
  };
}

function toolReply(callId: string, content: string): Message {
  return { role: 'tool', tool_call_id: callId, content };
}

function pendingSearchOf(arg: unknown): PendingSearch {
  const parsed = pendingSearchSchema.safeParse(arg);
  if (!parsed.success)
    throw new AgentqError(
      'INTERNAL',
      `rag-agent: the search step got no search to run (arg ${JSON.stringify(arg)?.slice(0, 200)})`,
    );
  return parsed.data;
}
