import { AgentqError } from '../../../shared/contracts/errors.js';
import { bm25Scores } from '../../../shared/retrieval/bm25.js';
import { cosineSimilarity } from '../../../shared/retrieval/cosine-similarity.js';
import { expertNames, type Expert, type RecallMode } from '../schemas/multi-agent-input.js';

/** An item and how similar it is to the query (higher is more similar). */
interface Scored {
  /** Position in the input list. */
  index: number;
  score: number;
}

/** The items best first; equal scores keep their input order, so a ranking is deterministic. */
function rankScores(scores: readonly number[], top: number): Scored[] {
  return scores
    .map((score, index) => ({ index, score }))
    .sort((left, right) => right.score - left.score || left.index - right.index)
    .slice(0, top);
}

/** Ranks `documents` by cosine similarity of their vectors to the query's vector. */
export function rankByEmbedding(
  query: readonly number[],
  documents: readonly (readonly number[])[],
  top: number,
): Scored[] {
  return rankScores(
    documents.map((vector) => cosineSimilarity(query, vector)),
    top,
  );
}

const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from how i in is it its me my of on or should that the this to was what when where which who why will with you your'.split(
    ' ',
  ),
);

/** Lower-case words without stop words, plural `s` removed (queues → queue), so simple variants match. */
function lexicalTerms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => !STOP_WORDS.has(word))
    .map((word) => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word));
}

/**
 * Ranks `documents` against `query` with BM25 (k1 1.2, b 0.75) over the documents themselves: the
 * deterministic fallback when no embedding model is configured. Words shared with few documents weigh
 * more than words every document has.
 */
export function rankLexically(query: string, documents: readonly string[], top: number): Scored[] {
  return rankScores(bm25Scores(documents.map(lexicalTerms), lexicalTerms(query)), top);
}

/** A run's recall mode and named lead: its input's, else the graph's. */
export function leadChoiceOf(
  input: { recall?: RecallMode | undefined; lead?: string | undefined },
  graphRecall: RecallMode,
  graphLead: string | undefined,
): { recallMode: RecallMode; leadName: string | null } {
  const recallMode = input.recall ?? (input.lead !== undefined ? 'specific' : graphRecall);
  return { recallMode, leadName: recallMode === 'specific' ? (input.lead ?? graphLead ?? null) : null };
}

/** Experts recalled by similarity when the run does not say. */
const SIMILARITY_TOP_N = 3;

/**
 * How many experts a run recalls: its `topN`; else 3 ranked by similarity, or every expert when the lead is
 * chosen by position or name (the lead then has all the others as tools, as the Rust runtime gives them).
 */
export function recalledCount(topN: number | undefined, recallMode: RecallMode, experts: number): number {
  return topN ?? (recallMode === 'similarity' ? SIMILARITY_TOP_N : experts);
}

/** `first` and `specific`: the lead by position or by name, then the next experts in list order. */
export function chooseLead(state: {
  experts: readonly Expert[];
  topN: number;
  recallMode: RecallMode;
  leadName: string | null;
}): { recall: 'first' | 'specific'; selected: { name: string; score: null }[] } {
  const index = state.recallMode === 'first' ? 0 : state.experts.findIndex((expert) => expert.name === state.leadName);
  if (state.leadName === null && state.recallMode === 'specific')
    throw new AgentqError(
      'INVALID_INPUT',
      `multi-agent: recall 'specific' needs lead, the name of the expert who leads; known experts: ${expertNames(state.experts)}`,
    );
  if (index < 0)
    throw new AgentqError(
      'INVALID_INPUT',
      `multi-agent: the lead '${state.leadName}' is not one of the run's experts; known experts: ${expertNames(state.experts)}`,
    );
  const order = [state.experts[index]!, ...state.experts.filter((_, position) => position !== index)];
  return {
    recall: state.recallMode === 'first' ? 'first' : 'specific',
    selected: order.slice(0, state.topN).map((expert) => ({ name: expert.name, score: null })),
  };
}
