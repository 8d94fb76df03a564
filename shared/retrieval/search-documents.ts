import { AgentqError } from '../contracts/errors.js';
import type { HybridFusion, PayloadFilter, VectorStore } from '../ports/vector-store.js';
import type { ChunkPayload } from './chunk-records.js';
import { relevanceOf } from './relevance-score.js';

export interface SearchRequest {
  /** The question or keywords (plain text; search syntax in it is ignored). */
  query: string;
  /** Search this collection only. @default every collection of the tenant */
  collection?: string;
  /** Chunks to return. @default 5 */
  k?: number;
  /** Whose documents; required. */
  tenant: string;
  /** The query's embedding, when an embedder is configured: hits then fuse lexical and dense ranks. @default none */
  vector?: readonly number[];
  /** How lexical and dense ranks are fused (the embedder's `fusion`). @default RRF */
  fusion?: HybridFusion;
  /** Only chunks whose payload matches (e.g. `{docId}`). @default none */
  filter?: PayloadFilter;
}

/** A ranked chunk, with what a citation needs. */
export interface SearchHit {
  chunkId: string;
  docId: string;
  title: string;
  path: string;
  /** 1-based page, for formats with pages; null otherwise. */
  page: number | null;
  /** Higher is better; comparable within one search only (see VectorHit.score). */
  score: number;
  /** Relevance in [0, 1], comparable across searches: cosine similarity where a dense model ran, else calibrated BM25 (relevance-score.ts). */
  relevance: number;
  text: string;
  headingPath: string[];
  collection: string;
}

export const MAX_SEARCH_K = 100;

/** Searches the tenant's ingested documents: the capability behind `agentq search`, `POST /v1/search` and the RAG graphs. */
export async function searchDocuments(
  store: VectorStore,
  { query, collection, k = 5, tenant, vector, fusion, filter }: SearchRequest,
): Promise<SearchHit[]> {
  if (typeof query !== 'string' || query.trim().length === 0)
    throw new AgentqError('INVALID_INPUT', 'search: query must be non-empty text');
  if (!Number.isInteger(k) || k < 1 || k > MAX_SEARCH_K)
    throw new AgentqError('INVALID_INPUT', `search: k must be an integer from 1 to ${MAX_SEARCH_K}, got ${k}`);
  const hits = await store.query(tenant, {
    text: query,
    limit: k,
    ...(collection === undefined ? {} : { collection }),
    ...(vector ? { vector, ...(fusion ? { fusion } : {}) } : {}),
    ...(filter ? { filter } : {}),
  });
  return hits.map((hit) => {
    const payload = hit.payload as unknown as Partial<ChunkPayload>;
    return {
      chunkId: hit.id,
      docId: payload.docId ?? '',
      title: payload.title ?? '',
      path: payload.path ?? '',
      page: payload.page ?? null,
      score: hit.score,
      relevance: relevanceOf(query, { ...hit, text: `${payload.title ?? ''} ${hit.text}` }),
      text: hit.text,
      headingPath: payload.headingPath ?? [],
      collection: hit.collection,
    };
  });
}
