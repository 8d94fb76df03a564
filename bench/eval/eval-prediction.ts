import { basename, extname } from 'node:path';
import type { RagOutput } from '../../shared/retrieval/rag-output.js';

/** One line of a predictions file, as ../shared/eval/score.py reads it. */
export interface EvalPrediction {
  id: string;
  answer: string;
  /** Ranked: the documents the answer cites, then the run's other retrieved documents. */
  cited_doc_ids: string[];
}

/** A document's id in the eval sets: its file name without the extension. */
export function docIdOfPath(path: string): string {
  const name = basename(path.replaceAll('\\', '/'));
  return basename(name, extname(name));
}

/**
 * The prediction for one question from its `rag-agent` output: the answer, and the cited documents
 * first, then every other document the run retrieved, in the run's order (each once).
 */
export function predictionOf(id: string, output: Partial<RagOutput> | null | undefined): EvalPrediction {
  const ids = [...citedDocIdsOf(output), ...(output?.retrieved ?? []).map((document) => docIdOfPath(document.path))];
  return { id, answer: output?.answer ?? '', cited_doc_ids: [...new Set(ids)] };
}

/**
 * The documents the answer itself cites, in citation order, each once: its sources marked `cited` (all
 * of them in outputs from before the mark), ordered as `retrieved` begins, since `sources: 'all'` lists
 * them by relevance instead.
 */
export function citedDocIdsOf(output: Partial<RagOutput> | null | undefined): string[] {
  const cited = new Set(
    (output?.sources ?? []).filter((source) => source.cited !== false).map((source) => docIdOfPath(source.path)),
  );
  const inOrder = (output?.retrieved ?? []).map((document) => docIdOfPath(document.path)).filter((id) => cited.has(id));
  return [...new Set([...inOrder, ...cited])];
}
