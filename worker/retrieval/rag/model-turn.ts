import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { Message } from '../../../shared/contracts/run-record.js';
import { callLanguageModel } from '../../agents/llm/call-language-model.js';
import { loadPromptHistory } from '../../agents/memory/prompt-history.js';
import { checkPromptSize } from '../../agents/memory/summarize-step.js';
import { checkCitations } from './check-citations.js';
import { extractAnswer } from './extract-answer.js';
import { rankPassages } from './rank-passages.js';
import { RAG_FINAL_ANSWER_REQUEST, RAG_SEARCH_FIRST, ragSystemPrompt } from './rag-prompts.js';
import { MAX_SEARCHES_PER_ROUND, type PendingSearch, type RagState, type RagUpdate } from './rag-state.js';
import { parseRagToolCall, ragTools, type RagToolCall } from './rag-tools.js';

/** One model call and what follows from it: searches to run, or the final answer (citations checked). */
export async function modelTurn(current: Readonly<RagState>, context: NodeContext): Promise<RagUpdate> {
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
