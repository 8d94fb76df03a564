import { channel, type Channel } from '../../shared/graph/channels.js';
import type { NodeContext } from '../../shared/graph/node-context.js';
import type { RetrievedSource, RetrieveOptions } from './schemas/retrieve-options.js';
import { ragVectorStoreOf } from './rag/rag-vector-store-of.js';
import { searchPassages } from './rag/search-passages.js';

/** What a retrieval step found: the passages (with their text, for the prompt) and how it searched. */
export interface Retrieval {
  query: string;
  passages: (RetrievedSource & { text: string })[];
  retrieval: 'lexical' | 'dense' | 'hybrid';
}

/** The state key a retrieval node writes (`state: { retrieval: retrievalChannel(), … }`). */
export function retrievalChannel(): Channel<Retrieval | null> {
  return channel.replace<Retrieval | null>(null);
}

/**
 * Searches the run tenant's documents for `query` (the vector store rag-agent uses: BM25, fused with
 * embeddings when EMBED_MODEL is set) and keeps the best `k` passages scoring at least `minScore`.
 */
export async function retrieve(
  context: NodeContext,
  query: string,
  { collection, k, minScore }: RetrieveOptions,
): Promise<Retrieval> {
  const result = await searchPassages(context, await ragVectorStoreOf(context), { query, collection, k, round: 1 });
  const passages = result.passages
    .filter((passage) => passage.score >= minScore)
    .slice(0, k)
    .map(({ id, title, path, page, score, text }) => ({
      id,
      title,
      path,
      page,
      score: Math.round(score * 10_000) / 10_000,
      text,
    }));
  return { query, passages, retrieval: result.retrieval };
}

/**
 * A node for your own graphs: retrieves for the state's query and writes `retrieval` (declare it with
 * `retrievalChannel()`); put `formatPassages(state.retrieval)` in the next prompt and
 * `sourcesOf(state.retrieval)` in the output.
 *
 * ```ts
 * .node('retrieve', retrievalNode({ query: (state) => state.question, options: { collection: 'handbook', k: 3, minScore: 0 } }))
 * ```
 */
export function retrievalNode<S>({
  query,
  options,
}: {
  query: (state: Readonly<S>) => string;
  options: RetrieveOptions | ((state: Readonly<S>) => RetrieveOptions);
}) {
  return async (state: Readonly<S>, context: NodeContext): Promise<{ retrieval: Retrieval }> => {
    const resolved = typeof options === 'function' ? options(state) : options;
    await context.emit('tool-call', { tool: 'retrieve', collection: resolved.collection });
    const retrieval = await retrieve(context, query(state), resolved);
    await context.emit('tool-result', { tool: 'retrieve', passages: retrieval.passages.length });
    return { retrieval };
  };
}

/** The passages as the model reads them: each with its id to cite, its title and path. */
export function formatPassages(retrieval: Retrieval | null): string {
  if (!retrieval || retrieval.passages.length === 0) return 'No passage of the documents matches this request.';
  const lines = retrieval.passages.map(
    (passage) =>
      `[${passage.id}] ${passage.title} (${passage.path}${passage.page === null ? '' : `, page ${passage.page}`}):\n${passage.text}`,
  );
  return `Passages from the documents (cite the ones you use by their id in square brackets, e.g. [${retrieval.passages[0]!.id}]):\n\n${lines.join('\n\n')}`;
}

/** The sources for a run's output: the passages given to the model, without their text. */
export function sourcesOf(retrieval: Retrieval | null): RetrievedSource[] {
  return (retrieval?.passages ?? []).map(({ id, title, path, page, score }) => ({ id, title, path, page, score }));
}
