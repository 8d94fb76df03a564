import type { NodeContext } from '../../../shared/graph/node-context.js';
import { agentSettingsOf, embedderOf } from '../agent-services.js';
import { guardAnswer, guardInput } from '../guardrails/guard-text.js';
import { closeTurn, openTurn } from '../memory/conversation-turn.js';
import { DENSE_MATCH_NOTE, denseSentenceMatch } from './dense-sentence-match.js';
import { extractAnswer } from './extract-answer.js';
import { planExtractiveRound } from './plan-extractive-round.js';
import { rankPassages, type DenseMatch, type RankedPassage } from './rank-passages.js';
import type { RagState, RagUpdate } from './rag-state.js';

/**
 * The extractive answerer's decision: search, refine once when the first results are weak, then
 * answer — from the passages ranked again with the dense sentence match when the local model is there.
 */
export async function extractiveTurn(current: Readonly<RagState>, context: NodeContext): Promise<RagUpdate> {
  // The input guardrails see the question before the first search (a rewrite is what is searched).
  const query = current.rounds === 0 ? await guardInput(context, current.guardrails, current.query) : current.query;
  const rewritten = query === current.query ? {} : { query };
  const linkBonus = current.rounds >= 2 ? 1 : 0;
  const lexical = rankPassages(query, current.passages, { linkBonus });
  const move = planExtractiveRound({
    question: query,
    rounds: current.rounds,
    maxIterations: current.maxIterations,
    ranked: lexical,
  });
  if (move.kind === 'search') {
    const round = current.rounds + 1;
    const call = move.tool === 'search' ? { query: move.query } : { refined_query: move.query };
    return {
      ...rewritten,
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
  // The extractive answerer cannot be asked again: an output guardrail's reprompt blocks.
  const guarded = await guardAnswer(context, current.guardrails, current.reprompts, answer, false);
  // The question and answer join the history as a model turn's would: the run's transcript, and what a
  // conversation's next turn (extractive or not) starts from; the searches stay in the state. Nothing was
  // added before the answer (in a run from before `turnStarted` was kept too), and without a system
  // prompt the history's length changes nothing: no history is read for it.
  const opened = openTurn({
    turnStarted: current.turnStarted ?? false,
    historyLength: 0,
    system: null,
    question: { role: 'user', content: current.query },
  });
  return {
    modelName: 'extractive',
    messages: closeTurn(opened, guarded.text),
    turnStarted: true,
    done: true,
    pendingSearches: [],
    answer: guarded.text,
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
