import { bm25Idf } from '../../../shared/retrieval/bm25.js';
import { bm25Tokens } from '../../../shared/retrieval/bm25-tokens.js';
import type { RerankCandidate, Reranker } from '../../../shared/ports/reranker.js';

/** Terms in one window: about a sentence's worth of content words (stopwords are not counted). @default 12 */
const WINDOW = 12;
/** Share of the score that the question's word pairs found in order give; the rest is the best window's coverage. @default 0.3 */
const PAIR_WEIGHT = 0.3;
/** Positions a pair's second term may follow its first (a stopword between them is already dropped). @default 2 */
const PAIR_GAP = 2;

/**
 * The built-in reranker: what the first stage cannot see because it scores each term alone. A passage
 * scores by (a) the best window of WINDOW terms — the share of the question's term weight it holds, terms
 * weighted by how rare they are among the candidates — and (b) the share of the question's adjacent
 * term pairs it holds in order (`Eiffel Tower`, `first sketch`). Pure and in-process: no model, no cost.
 */
export const lexicalReranker: Reranker = {
  name: 'lexical',
  score: (query, candidates) => Promise.resolve(lexicalScores(query, candidates)),
};

/** The scores `lexicalReranker` gives, synchronously. */
export function lexicalScores(query: string, candidates: readonly RerankCandidate[]): number[] {
  const asked = bm25Tokens(query);
  const terms = [...new Set(asked)];
  if (terms.length === 0 || candidates.length === 0) return candidates.map(() => 0);
  const tokens = candidates.map((candidate) => bm25Tokens(`${candidate.title}\n${candidate.text}`));
  const present = tokens.map((list) => new Set(list));
  const weight = new Map(
    terms.map((term) => [term, bm25Idf(candidates.length, present.filter((set) => set.has(term)).length)]),
  );
  const total = [...weight.values()].reduce((sum, value) => sum + value, 0);
  const pairs = asked.slice(1).map((term, index) => [asked[index]!, term] as const);
  return tokens.map((list) => {
    const window = total > 0 ? bestWindow(list, weight) / total : 0;
    const inOrder = pairs.length > 0 ? pairs.filter((pair) => holdsPair(list, pair)).length / pairs.length : window;
    return (1 - PAIR_WEIGHT) * window + PAIR_WEIGHT * inOrder;
  });
}

/** The most question-term weight any WINDOW consecutive terms hold (each term counted once). */
function bestWindow(tokens: readonly string[], weight: ReadonlyMap<string, number>): number {
  let best = 0;
  for (let start = 0; start < Math.max(1, tokens.length - WINDOW + 1); start++) {
    const seen = new Set<string>();
    let sum = 0;
    for (const token of tokens.slice(start, start + WINDOW)) {
      const value = weight.get(token);
      if (value === undefined || seen.has(token)) continue;
      seen.add(token);
      sum += value;
    }
    best = Math.max(best, sum);
  }
  return best;
}

/** The pair's first term, then its second within PAIR_GAP positions. */
function holdsPair(tokens: readonly string[], [first, second]: readonly [string, string]): boolean {
  for (let index = 0; index < tokens.length; index++) {
    if (tokens[index] !== first) continue;
    for (let gap = 1; gap <= PAIR_GAP; gap++) if (tokens[index + gap] === second) return true;
  }
  return false;
}
