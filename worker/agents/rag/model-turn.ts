import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { Message } from '../../../shared/contracts/run-record.js';
import { callLanguageModel } from '../llm/call-language-model.js';
import { loadPromptHistory } from '../../runtime/memory/prompt-history.js';
import { closeTurn, openTurn, startsTurn } from '../memory/conversation-turn.js';
import { checkPromptSize } from '../memory/summarize-step.js';
import { guardAnswer, guardInput } from '../guardrails/guard-text.js';
import { runToolsOf } from '../tools/tool-provider.js';
import type { NodeContext as Context } from '../../../shared/graph/node-context.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';
import { checkCitations } from './check-citations.js';
import { extractAnswer } from './extract-answer.js';
import { rankPassages } from './rank-passages.js';
import { RAG_FINAL_ANSWER_REQUEST, RAG_SEARCH_FIRST, ragSystemPrompt, withRetrievedContent } from './rag-prompts.js';
import { MAX_SEARCHES_PER_ROUND, type PendingSearch, type RagState, type RagUpdate } from './rag-state.js';
import { parseRagToolCall, ragTools, type RagToolCall } from './rag-tools.js';

/** One model call and what follows from it: searches to run, or the final answer (citations checked). */
export async function modelTurn(current: Readonly<RagState>, context: NodeContext): Promise<RagUpdate> {
  const { messages: history, length } = await loadPromptHistory(context, current.memory);
  const opening = { turnStarted: current.turnStarted, historyLength: length };
  // The input guardrails see the question before the model does (a rewrite is what the model reads).
  const query = startsTurn(opening) ? await guardInput(context, current.guardrails, current.query) : current.query;
  const added: Message[] = openTurn({
    ...opening,
    system: ragSystemPrompt(current.maxIterations),
    question: { role: 'user', content: query },
  });
  const searchesLeft = current.rounds < current.maxIterations;
  if (!searchesLeft) added.push({ role: 'user', content: RAG_FINAL_ANSWER_REQUEST });
  const messages = withRetrievedContent([...history, ...added], current.retrievedContent);
  // Extra tools are checked before any model call (an unknown name fails the run first) and offered
  // while search rounds are left; the last turn is for the answer.
  const extra = await runToolsOf(context, current.extraTools);
  // `plan` is offered until the run has a plan (createRagAgentGraph's `planning`).
  const planOffered = current.planning && current.plan.length === 0;
  const tools = [
    ...ragTools({ searchesLeft, planning: planOffered }),
    ...(searchesLeft ? extra.map(({ name, description, parameters }) => ({ name, description, parameters })) : []),
  ];
  // Past AGENTQ_SUMMARIZE_AT of the context window: nothing is sent; the summary is its own step, then this one runs again.
  const size = await checkPromptSize(context, current.memory, length, messages, tools);
  if (size.summarize) return { summarize: true, pendingSearches: [], pendingToolCalls: [] };
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
    pendingToolCalls: [],
    ...(query === current.query ? {} : { query }),
  };
  const extraNames = new Set(searchesLeft ? extra.map((tool) => tool.name) : []);
  const extraCalls: ToolCall[] = (message.tool_calls ?? []).filter((call) => extraNames.has(call.function.name));
  const calls = (message.tool_calls ?? []).filter((call) => !extraNames.has(call.function.name)).map(parseRagToolCall);
  const searched = current.searches.length > 0;

  if (calls.length === 0 && extraCalls.length === 0) {
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
    return { ...base, ...(await finish(context, current, message.content ?? '', [], [...added, message])) };
  }

  const final = calls.find((call): call is Extract<RagToolCall, { kind: 'final' }> => call.kind === 'final');
  if (final && (searched || !searchesLeft)) {
    const replies = [
      ...calls.map((call) =>
        toolReply(call.callId, call === final ? 'Answer recorded.' : 'Not run: the answer was given in this turn.'),
      ),
      ...extraCalls.map((call) => toolReply(call.id, 'Not run: the answer was given in this turn.')),
    ];
    return {
      ...base,
      ...(await finish(context, current, final.answer, final.citations, [...added, message, ...replies])),
    };
  }
  if (!searchesLeft) {
    // Only final_answer was offered; the model called something else. History stays valid, and the
    // run still ends with an answer grounded in what it retrieved.
    const replies = calls.map((call) => toolReply(call.callId, 'Not run: no search rounds are left.'));
    return { ...base, ...(await extractiveFallback(context, current, [...added, message, ...replies])) };
  }

  const replies: Message[] = [];
  const pendingSearches: PendingSearch[] = [];
  const reasoning: string[] = [];
  let plan: string[] | undefined;
  for (const call of calls) {
    if (call.kind === 'invalid') replies.push(toolReply(call.callId, call.error));
    else if (call.kind === 'final') replies.push(toolReply(call.callId, RAG_SEARCH_FIRST));
    else if (call.kind === 'plan') {
      const recorded = planOffered && !plan;
      if (recorded) {
        plan = call.steps;
        reasoning.push(`Planned: ${plan.map((step, index) => `${index + 1}) ${step}`).join(' ')}`);
      }
      replies.push(toolReply(call.callId, recorded ? PLAN_RECORDED : 'Error: no plan is taken now; search instead.'));
    } else if (pendingSearches.length >= MAX_SEARCHES_PER_ROUND)
      replies.push(
        toolReply(call.callId, `Error: at most ${MAX_SEARCHES_PER_ROUND} searches per turn; this one was not run.`),
      );
    else {
      pendingSearches.push({ callId: call.callId, tool: call.tool, query: call.query, round: current.rounds + 1 });
      reasoning.push(`Calling ${call.tool}: ${call.arguments}`);
    }
  }
  for (const call of extraCalls) reasoning.push(`Calling ${call.function.name}: ${call.function.arguments}`);
  // A turn that only made the run's plan searched nothing: it costs no round. Any other turn does, so a
  // model that keeps calling what is not run still meets max_iterations.
  const planOnly = plan !== undefined && calls.every((call) => call.kind === 'plan') && extraCalls.length === 0;
  return {
    ...base,
    messages: [...added, message, ...replies],
    pendingSearches,
    pendingToolCalls: extraCalls,
    rounds: planOnly ? current.rounds : current.rounds + 1,
    reasoning,
    ...(plan ? { plan } : {}),
  };
}

/**
 * The end of a model run: the answer through the output guardrails (a reprompt sends the model back
 * with the rejection, within the guardrails' maxReprompts), then with only citations of passages this
 * run retrieved.
 */
async function finish(
  context: Context,
  current: Readonly<RagState>,
  proposed: string,
  citations: readonly string[],
  messages: Message[],
): Promise<RagUpdate> {
  // Citations are checked first, so the guardrails see (and may rewrite) exactly what the user gets.
  const checked = checkCitations(proposed, citations, current.passages);
  const guarded = await guardAnswer(context, current.guardrails, current.reprompts, checked.answer);
  if (guarded.action === 'reprompt')
    return { messages: [...messages, guarded.rejection], reprompts: guarded.reprompts, pendingSearches: [] };
  const reasoning = checked.dropped.map(
    (id) => `Dropped citation [${id}]: no passage with that id was retrieved in this run`,
  );
  if (checked.cited.length === 0) reasoning.push('The answer cites no retrieved passage');
  return {
    messages: closeTurn(messages, guarded.text),
    done: true,
    pendingSearches: [],
    answer: guarded.text,
    cited: checked.cited,
    reasoning,
  };
}

async function extractiveFallback(
  context: Context,
  current: Readonly<RagState>,
  messages: Message[],
): Promise<RagUpdate> {
  const ranked = rankPassages(current.query, current.passages, { linkBonus: current.rounds >= 2 ? 1 : 0 });
  const { sentences, notes } = extractAnswer(ranked, { followLinks: current.rounds >= 2 });
  const extracted =
    sentences.map(({ sentence, passageId }) => `${sentence} [${passageId}]`).join(' ') ||
    'No answer: the model gave none within max_iterations and nothing was retrieved.';
  // No model turn is left to ask again: a reprompt blocks.
  const guarded = await guardAnswer(context, current.guardrails, current.reprompts, extracted, false);
  return {
    messages: closeTurn(messages, guarded.text),
    done: true,
    pendingSearches: [],
    answer: guarded.text,
    cited: [...new Set(sentences.map((sentence) => sentence.passageId))],
    reasoning: [
      'The model gave no final answer after the last search round; answered extractively from the retrieved passages',
      ...notes,
    ],
  };
}

/** What the model is told once its plan is kept. */
const PLAN_RECORDED = 'Plan recorded. Now search for each sub-question (independent searches may be called at once).';

function toolReply(callId: string, content: string): Message {
  return { role: 'tool', tool_call_id: callId, content };
}
