import { citationIdOf, type RetrievedPassage } from '../../worker/agents/rag/retrieved-passage.js';

/** A passage of document `docs/<name>.md` as a rag-agent search keeps it (chunk `doc_<name>.c0`, round 1). */
export function retrievedPassage(name: string, text: string, score = 1, page: number | null = null): RetrievedPassage {
  const chunkId = `doc_${name}.c0`;
  return {
    id: citationIdOf(chunkId),
    chunkId,
    docId: `doc_${name}`,
    title: name,
    path: `docs/${name}.md`,
    page,
    headingPath: [],
    text,
    score,
    round: 1,
  };
}
