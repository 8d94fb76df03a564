import type { NodeContext } from '../../../shared/graph/node-context.js';
import { searchDocuments, type SearchHit } from '../../../shared/retrieval/search-documents.js';
import { embedTexts } from '../llm/embed-texts.js';
import { embedderOf } from '../agent-services.js';
import type { VectorStore } from '../../../shared/ports/vector-store.js';
import type { RetrievalMode } from '../../../shared/retrieval/rag-output.js';
import { findNamedDocuments, type NamedDocument } from './named-documents.js';
import { reportForPeriod } from '../../../shared/retrieval/sec-filings/period-of-query.js';
import { citationIdOf, type RetrievedPassage } from './retrieved-passage.js';

interface SearchPassagesRequest {
  query: string;
  collection: string;
  /** Passages to fetch. */
  k: number;
  /** The search round (1-based), recorded on each passage. */
  round: number;
  /** BM25 only, even with an embedder. @default false */
  lexical?: boolean;
}

interface SearchPassagesResult {
  /** Best first; `score` relative to the best hit (1 for it). */
  passages: RetrievedPassage[];
  retrieval: RetrievalMode;
  /** How documents the query names shaped the search, for the run's reasoning steps; null when it names none. */
  scope: string | null;
}

/**
 * One search of a `rag-agent` run, scoped to the run's tenant (`context.tenant`): every search of a
 * run sees only that tenant's documents, whatever its input says. With an embedder (EMBED_MODEL) and
 * a collection that holds vectors of the embedder's length, the query is embedded too and the store
 * fuses lexical and dense ranks (`hybrid`); otherwise the search is BM25 (`lexical`).
 */
export async function searchPassages(
  context: NodeContext,
  store: VectorStore,
  { query, collection, k, round, lexical = false }: SearchPassagesRequest,
): Promise<SearchPassagesResult> {
  const vector = lexical ? undefined : await queryVector(context, store, query, collection);
  const fusion = embedderOf(context)?.fusion;
  const request = {
    query,
    collection,
    k,
    tenant: context.tenant,
    ...(vector ? { vector, ...(fusion ? { fusion } : {}) } : {}),
  };
  const named = await findNamedDocuments(store, context.tenant, { query, collection });
  // A refined query carries names the passages mention (the second hop): boosting their titles again would pull the first hop's documents back over the answer's.
  const { hits, scope } = await scopedSearch(
    store,
    request,
    round === 1 ? named : named.filter((document) => document.kind === 'company'),
  );
  const best = hits[0]?.score ?? 0;
  const passages = hits.map((hit): RetrievedPassage => ({
    id: citationIdOf(hit.chunkId),
    chunkId: hit.chunkId,
    docId: hit.docId,
    title: hit.title,
    path: hit.path,
    page: hit.page,
    headingPath: hit.headingPath,
    text: hit.text,
    score: best > 0 ? hit.score / best : 0,
    relevance: hit.relevance,
    round,
  }));
  return { passages, retrieval: vector ? 'hybrid' : 'lexical', scope };
}

/** The plain search's hits that stay ahead of a named title's passages: the best passage may be about something else the question asks. @default 2 */
const KEEP_PLAIN_FIRST = 2;
/** Passages of each named document moved up. @default 2 */
const BOOSTED_PER_DOCUMENT = 2;
/** Documents a named title may boost at most. @default 4 */
const MAX_BOOSTED_TITLES = 4;

/**
 * The search, shaped by the documents the query names. A named company is a hard constraint (a
 * question about Apple's expenses is not answered by Intel's filing): hits come from that company's
 * documents, topped up from the rest only when they run short. A named title is a hint: its
 * documents' best passages come right after the plain search's first two, so they rise without pushing
 * out the best passage elsewhere — the way both sides of "which is older, A or B?" reach the top.
 */
async function scopedSearch(
  store: VectorStore,
  request: Parameters<typeof searchDocuments>[1] & { k: number },
  named: readonly NamedDocument[],
): Promise<{ hits: SearchHit[]; scope: string | null }> {
  const companies = named.filter((document) => document.kind === 'company');
  // A title shared by many documents (the paragraphs of one article) tells them apart no better than the query itself.
  const chosen = companies.length > 0 ? companies : named.length <= MAX_BOOSTED_TITLES ? named : [];
  const plain = await searchDocuments(store, request);
  if (chosen.length === 0) return { hits: plain, scope: null };
  const inScope = await searchDocuments(store, {
    ...request,
    filter: { docId: { in: chosen.map((document) => document.docId) } },
  });
  const names = [...new Set(chosen.map((document) => document.name))].map((name) => `"${name}"`).join(', ');
  if (companies.length > 0) {
    // A period the question names ("Q3 2023", "the latest 10-Q") puts that report's passages first.
    const period = reportForPeriod(request.query, companies);
    const first = period ? await searchDocuments(store, { ...request, filter: { docId: period.report.docId } }) : [];
    const seen = new Set<string>();
    const hits = [...first, ...inScope, ...plain]
      .filter((hit) => !seen.has(hit.chunkId) && seen.add(hit.chunkId))
      .slice(0, request.k);
    const periodNote = period ? `; ${period.why}: "${period.report.title}" first` : '';
    return {
      hits,
      scope: `the query names ${names}: searched only ${chosen.length === 1 ? 'its document' : `its ${chosen.length} documents`} (${titlesOf(chosen)})${periodNote}`,
    };
  }
  // The plain search's best hits keep their places; each named document's best passages come right after them.
  const perDocument = new Map<string, number>();
  const boosted = inScope.filter((hit) => {
    const count = perDocument.get(hit.docId) ?? 0;
    perDocument.set(hit.docId, count + 1);
    return count < BOOSTED_PER_DOCUMENT;
  });
  const seen = new Set<string>();
  const merged = [...plain.slice(0, KEEP_PLAIN_FIRST), ...boosted, ...plain, ...inScope]
    .filter((hit) => !seen.has(hit.chunkId) && seen.add(hit.chunkId))
    .slice(0, request.k);
  return {
    hits: merged,
    scope: `the query names ${names}: boosted ${chosen.length === 1 ? 'that document' : `those ${chosen.length} documents`} (${titlesOf(chosen)})`,
  };
}

function titlesOf(documents: readonly NamedDocument[]): string {
  const titles = [...new Set(documents.map((document) => document.title))];
  return titles.length <= 3
    ? titles.map((title) => `"${title}"`).join(', ')
    : `${titles
        .slice(0, 3)
        .map((title) => `"${title}"`)
        .join(', ')} and ${titles.length - 3} more`;
}

/** The query's embedding when dense search can use it; undefined otherwise (no embedder, or no vectors of that length). */
async function queryVector(
  context: NodeContext,
  store: VectorStore,
  query: string,
  collection: string,
): Promise<number[] | undefined> {
  const embedder = embedderOf(context);
  if (!embedder) return undefined;
  const info = (await store.listCollections(context.tenant)).find((candidate) => candidate.name === collection);
  // No vectors in the collection (ingested without EMBED_MODEL): embedding the query would cost and find nothing.
  if (!info?.dimensions) return undefined;
  const { vectors } = await embedTexts(context, embedder, [query]);
  const vector = vectors[0];
  return vector && vector.length === info.dimensions ? [...vector] : undefined;
}
