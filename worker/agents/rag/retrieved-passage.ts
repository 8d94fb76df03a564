import { createHash } from 'node:crypto';

/** A chunk a search of this run returned, as the run's state keeps it (see `mergePassages`). */
export interface RetrievedPassage {
  /** The id answers cite it by: 6 hex digits derived from `chunkId`, the same in every search and run. */
  id: string;
  chunkId: string;
  docId: string;
  title: string;
  path: string;
  page: number | null;
  headingPath: string[];
  text: string;
  /** Its best hit over the run's searches, relative to the top hit of that search: in (0, 1]. Ranks the run's passages. */
  score: number;
  /**
   * Its best relevance over the run's searches, in [0, 1] and comparable across queries (SearchHit's
   * `relevance`): what the output's sources say. Absent in a state saved before it was kept.
   */
  relevance?: number;
  /** The first search round that returned it (1-based). */
  round: number;
}

/** The citation id of a chunk: short enough for a model to copy, stable across searches and retries. */
export function citationIdOf(chunkId: string): string {
  return createHash('sha256').update(chunkId).digest('hex').slice(0, 6);
}

/**
 * The reducer of the run's `passages` state key: passages new to the run are appended in the order
 * given; one seen before keeps its place and its earliest round, with the better of the two scores (and relevances).
 * Pure, as reducers must be: parallel search steps' writes are merged through it in task order.
 */
export function mergePassages(
  current: readonly RetrievedPassage[],
  update: readonly RetrievedPassage[],
): RetrievedPassage[] {
  const merged = [...current];
  const position = new Map(merged.map((passage, index) => [passage.chunkId, index]));
  for (const passage of update) {
    const index = position.get(passage.chunkId);
    if (index === undefined) {
      position.set(passage.chunkId, merged.length);
      merged.push(passage);
      continue;
    }
    const existing = merged[index]!;
    const relevance = Math.max(existing.relevance ?? 0, passage.relevance ?? 0);
    merged[index] = {
      ...existing,
      score: Math.max(existing.score, passage.score),
      ...(existing.relevance === undefined && passage.relevance === undefined ? {} : { relevance }),
      round: Math.min(existing.round, passage.round),
    };
  }
  return merged;
}
