import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { Reranker } from '../../../shared/ports/reranker.js';
import { agentSettingsOf } from '../agent-services.js';
import { lexicalReranker } from './lexical-reranker.js';
import type { RetrievedPassage } from './retrieved-passage.js';

/** A search's best hits the reranker reads (the rest count as scored 0). @default 10 */
export const RERANK_TOP_N = 10;

/** The worker's reranker: none when AGENTQ_RAG_RERANKER is `none`, else `services.reranker` or the built-in lexical one. */
export function rerankerOf(context: Pick<NodeContext, 'services'>): Reranker | undefined {
  if (agentSettingsOf(context).ragReranker === 'none') return undefined;
  return context.services.reranker ?? lexicalReranker;
}

/**
 * A search's passages in the reranker's order: each of the first `topN` gets the mean of its search
 * score and its rerank score (relative to the best rerank score, so both are 0…1 with 1 for the best);
 * the rest, not read, half their search score, as if read and found wanting. Sorted by that, ties in
 * search order; `relevance` (what sources say) is the store's and stays.
 */
export async function rerankPassages(
  reranker: Reranker,
  query: string,
  passages: readonly RetrievedPassage[],
  { topN = RERANK_TOP_N, abortSignal }: { topN?: number; abortSignal: AbortSignal },
): Promise<RetrievedPassage[]> {
  if (passages.length < 2) return [...passages];
  const read = passages.slice(0, topN);
  const scores = await reranker.score(
    query,
    read.map(({ title, text }) => ({ title, text })),
    { abortSignal },
  );
  const best = Math.max(0, ...scores.map((score) => (Number.isFinite(score) ? score : 0)));
  return passages
    .map((passage, index) => {
      const rerank = index < read.length && best > 0 ? Math.max(0, scores[index] ?? 0) / best : 0;
      return { passage: { ...passage, score: (passage.score + rerank) / 2 }, index };
    })
    .sort((left, right) => right.passage.score - left.passage.score || left.index - right.index)
    .map(({ passage }) => passage);
}
