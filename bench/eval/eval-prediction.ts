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
  const paths = [
    ...(output?.sources ?? []).map((source) => source.path),
    ...(output?.retrieved ?? []).map((document) => document.path),
  ];
  return { id, answer: output?.answer ?? '', cited_doc_ids: [...new Set(paths.map(docIdOfPath))] };
}

/** The documents the answer itself cites (its sources), in order, each once. */
export function citedDocIdsOf(output: Partial<RagOutput> | null | undefined): string[] {
  return [...new Set((output?.sources ?? []).map((source) => docIdOfPath(source.path)))];
}
