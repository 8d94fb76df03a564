import type { NodeContext } from '../../shared/graph/node-context.js';
import { searchDocuments } from '../../shared/ingest/search-documents.js';
import { embedTexts } from '../../shared/llm/embed-texts.js';
import { embedderOf } from '../../shared/ports/agent-services.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import type { RetrievalMode } from '../../shared/rag/rag-output.js';
import { citationIdOf, type RetrievedPassage } from './retrieved-passage.js';

export interface SearchPassagesRequest {
  query: string;
  collection: string;
  /** Passages to fetch. */
  k: number;
  /** The search round (1-based), recorded on each passage. */
  round: number;
}

export interface SearchPassagesResult {
  /** Best first; `score` relative to the best hit (1 for it). */
  passages: RetrievedPassage[];
  retrieval: RetrievalMode;
}

/**
 * One search of a `rag-agent` run, scoped to the run's tenant (`context.tenant`): every search of a
 * run sees only that tenant's documents, whatever its input says. With an embedder (EMBED_MODEL) and
 * a collection that holds vectors of the embedder's length, the query is embedded too and the store
 * fuses lexical and dense ranks (`hybrid`); otherwise the search is BM25 (`lexical`).
 */
export async function searchPassages(context: NodeContext, store: VectorStore, { query, collection, k, round }: SearchPassagesRequest): Promise<SearchPassagesResult> {
  const vector = await queryVector(context, store, query, collection);
  const hits = await searchDocuments(store, { query, collection, k, tenant: context.tenant, ...(vector ? { vector } : {}) });
  const best = hits[0]?.score ?? 0;
  const passages = hits.map(
    (hit): RetrievedPassage => ({
      id: citationIdOf(hit.chunkId),
      chunkId: hit.chunkId,
      docId: hit.docId,
      title: hit.title,
      path: hit.path,
      page: hit.page,
      headingPath: hit.headingPath,
      text: hit.text,
      score: best > 0 ? hit.score / best : 0,
      round,
    }),
  );
  return { passages, retrieval: vector ? 'hybrid' : 'lexical' };
}

/** The query's embedding when dense search can use it; undefined otherwise (no embedder, or no vectors of that length). */
async function queryVector(context: NodeContext, store: VectorStore, query: string, collection: string): Promise<number[] | undefined> {
  const embedder = embedderOf(context);
  if (!embedder) return undefined;
  const info = (await store.listCollections(context.tenant)).find((candidate) => candidate.name === collection);
  // No vectors in the collection (ingested without EMBED_MODEL): embedding the query would cost and find nothing.
  if (!info?.dimensions) return undefined;
  const { vectors } = await embedTexts(context, embedder, [query]);
  const vector = vectors[0];
  return vector && vector.length === info.dimensions ? [...vector] : undefined;
}
