import { searchWords } from './key-terms.js';
import { normalizedTitle, type RankedPassage } from './rank-passages.js';
import { salientPhrases } from './salient-phrases.js';

/**
 * Below this share of the question's key-term weight in the best sentence of the best passage, the
 * first results are weak: no single sentence says what the question asks, which is what multi-hop
 * questions look like (part of the question is about a thing the first passage only names). @default 0.7
 */
export const WEAK_COVERAGE = 0.7;
/** Passages whose names feed the refined query. @default 3 */
const REFINE_FROM_PASSAGES = 3;
/** Names added to the refined query at most (more would dilute it). @default 8 */
const REFINE_MAX_PHRASES = 8;

/** What the extractive answerer does next. */
type ExtractiveMove =
  | { kind: 'search'; tool: 'search' | 'refine_and_search'; query: string; reason: string }
  | { kind: 'answer'; reason: string };

interface ExtractiveRoundInput {
  question: string;
  /** Search rounds run so far. */
  rounds: number;
  maxIterations: number;
  /** The run's passages, ranked (rankPassages). */
  ranked: readonly RankedPassage[];
}

/**
 * The extractive answerer's policy, one decision per `model` step: search the question; if the
 * results are weak and a round is left, refine once — the question's key words plus the names the
 * best passages mention (the second hop of a multi-hop question); then answer.
 */
export function planExtractiveRound({ question, rounds, maxIterations, ranked }: ExtractiveRoundInput): ExtractiveMove {
  if (rounds === 0) return { kind: 'search', tool: 'search', query: question, reason: 'search the question as asked' };
  const best = ranked[0];
  const coverage = best?.coverage ?? 0;
  if (rounds >= 2) return { kind: 'answer', reason: 'refined once already' };
  // A refined query would hold the question's words again and no names: it would find nothing either.
  if (!best) return { kind: 'answer', reason: 'the search found nothing' };
  if (coverage >= WEAK_COVERAGE) {
    return {
      kind: 'answer',
      reason: `the best sentence holds ${percent(coverage)} of the question's key terms (≥ ${percent(WEAK_COVERAGE)})`,
    };
  }
  const weakness = `the best sentence holds only ${percent(coverage)} of the question's key terms (< ${percent(WEAK_COVERAGE)})`;
  if (rounds >= maxIterations)
    return { kind: 'answer', reason: `${weakness}, but max_iterations (${maxIterations}) allows no refinement` };
  const query = refineQuery(question, ranked);
  return { kind: 'search', tool: 'refine_and_search', query, reason: weakness };
}

/**
 * The second-hop query: the question's key words, then names the best passages mention that the
 * question does not (a passage's own title excluded), those in its best sentence first.
 */
export function refineQuery(question: string, ranked: readonly RankedPassage[]): string {
  const asked = question.toLowerCase();
  const phrases: string[] = [];
  for (const passage of ranked.slice(0, REFINE_FROM_PASSAGES)) {
    const own = normalizedTitle(passage.title);
    for (const phrase of [...salientPhrases(passage.bestSentence), ...salientPhrases(passage.text)]) {
      const key = phrase.toLowerCase();
      if (asked.includes(key) || key === own || phrases.some((known) => known.toLowerCase() === key)) continue;
      phrases.push(phrase);
    }
  }
  return [...searchWords(question), ...phrases.slice(0, REFINE_MAX_PHRASES)].join(' ');
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}
