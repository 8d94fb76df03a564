import type { RagOutput, RagSource, RagSourcesMode, RetrievedDocument } from '../../../shared/retrieval/rag-output.js';
import { rankPassages, type DenseMatch } from './rank-passages.js';
import type { RetrievedPassage } from './retrieved-passage.js';
import { retrievalModeOf, type SearchLogEntry } from './search-log-entry.js';

/** The state a `rag-agent` output is made from. */
interface RagOutputState {
  query: string;
  citations: boolean;
  /** The answer with `[id]` markers of cited passages. */
  answer: string;
  /** Cited passage ids, in order (each one retrieved in this run). */
  cited: readonly string[];
  passages: readonly RetrievedPassage[];
  searches: readonly SearchLogEntry[];
  reasoning: readonly string[];
  rounds: number;
  modelName: string;
  /** The extractive answer's dense sentence match (rankPassages), so `retrieved` is ranked as the answer was. @default none */
  denseMatch?: Readonly<DenseMatch>;
  /** Its weight. @default DENSE_MATCH_WEIGHT */
  denseWeight?: number;
  /** What `sources` lists; null (a run whose first step ran before it was kept): the cited pages, as then. @default null */
  sourcesMode?: RagSourcesMode | null;
}

/**
 * The run's output (`RagOutput`): sources are the run's passages by document and page — every one,
 * best relevance first (`sourcesMode` `all`), or the cited ones in citation order (`cited`) — each
 * marked `cited`, numbered in the answer when `citations` is on (markers removed otherwise);
 * `retrieved` lists every document the run saw, cited ones first (in citation order), then by rank. A score is the passage's relevance in 0…1 (SearchHit's
 * `relevance`: cosine similarity where a dense model ran, else calibrated BM25), the best over the
 * run's searches — the same for a passage whatever else a search returned, and comparable across
 * questions; what the store found, not how the answer used it. (A state saved before relevances were
 * kept gives the older score, relative to each search's best hit.)
 */
export function ragOutputOf(state: RagOutputState): RagOutput {
  const ranked = rankPassages(state.query, state.passages, {
    linkBonus: state.rounds >= 2 ? 1 : 0,
    ...(state.denseMatch ? { denseMatch: state.denseMatch } : {}),
    ...(state.denseWeight ? { denseWeight: state.denseWeight } : {}),
  });
  const relevance = new Map(
    state.passages.map((passage) => [passage.id, round(Math.min(1, Math.max(0, passage.relevance ?? passage.score)))]),
  );
  const byId = new Map(state.passages.map((passage) => [passage.id, passage]));
  const pageOf = (passage: RetrievedPassage) => `${passage.path}\u0000${passage.page ?? ''}`;
  // The cited pages in citation order: `retrieved` begins with them whatever `sources` lists.
  const citedPages: RagSource[] = [];
  const citedKeys: string[] = [];
  for (const id of state.cited) {
    const passage = byId.get(id);
    if (!passage || citedKeys.includes(pageOf(passage))) continue;
    citedKeys.push(pageOf(passage));
    citedPages.push({ ...sourceOf(passage, relevance.get(id) ?? 0), cited: true });
  }
  const sources = state.sourcesMode === 'all' ? allPages(ranked, relevance, new Set(citedKeys), pageOf) : citedPages;
  const sourceKeys = sources.map((source) => `${source.path}\u0000${source.page ?? ''}`);
  const sourceIndex = new Map<string, number>();
  for (const id of state.cited) {
    const passage = byId.get(id);
    if (passage) sourceIndex.set(id, sourceKeys.indexOf(pageOf(passage)) + 1);
  }
  const retrieved: RetrievedDocument[] = [];
  const seen = new Set<string>();
  const add = (document: RetrievedDocument) => {
    if (seen.has(document.path)) return;
    seen.add(document.path);
    retrieved.push(document);
  };
  for (const { cited: _cited, ...page } of citedPages) add(page);
  for (const passage of ranked) add(sourceOf(passage, relevance.get(passage.id) ?? 0));
  return {
    answer: renderMarkers(state.answer, state.citations ? sourceIndex : null),
    sources,
    reasoning_steps: [...state.reasoning],
    search_count: state.searches.length,
    iterations: state.rounds,
    model: state.modelName,
    retrieval: retrievalModeOf(state.searches),
    retrieved,
  };
}

/** `[id]` markers → `[n]` (n = the source's position, 1-based; repeats folded), or removed when `numbers` is null. */
function renderMarkers(answer: string, numbers: ReadonlyMap<string, number> | null): string {
  const text = answer.replace(/\s?((?:\[[0-9a-f]{6}\])+)/g, (_match, group: string) => {
    if (!numbers) return '';
    const positions = [
      ...new Set(
        [...group.matchAll(/\[([0-9a-f]{6})\]/g)]
          .map((match) => numbers.get(match[1]!))
          .filter((position) => position !== undefined),
      ),
    ];
    return positions.length > 0 ? ` ${positions.map((position) => `[${position}]`).join('')}` : '';
  });
  return text.trim();
}

function sourceOf(passage: RetrievedPassage, score: number): RetrievedDocument {
  return { title: passage.title, path: passage.path, page: passage.page, score };
}

/**
 * Every page of the run's passages once, at its best passage's relevance, best first; ties keep the
 * answer's ranking (`ranked`), so what the answer stands on comes before an equal one it passed over.
 */
function allPages(
  ranked: readonly RetrievedPassage[],
  relevance: ReadonlyMap<string, number>,
  citedKeys: ReadonlySet<string>,
  pageOf: (passage: RetrievedPassage) => string,
): RagSource[] {
  const pages = new Map<string, RagSource>();
  for (const passage of ranked) {
    const key = pageOf(passage);
    const score = relevance.get(passage.id) ?? 0;
    const known = pages.get(key);
    if (!known) pages.set(key, { ...sourceOf(passage, score), cited: citedKeys.has(key) });
    else if (score > known.score) known.score = score;
  }
  // Array.prototype.sort is stable: equal scores keep the ranking's order.
  return [...pages.values()].sort((left, right) => right.score - left.score);
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
