import type { RetrievedPassage } from './retrieved-passage.js';

/** A bracket group of short ids: `[3fa9c1]`, `[3fa9c1, 77b0e2]` (also what invented citations look like: `[doc7]`). */
const MARKER = /\s?\[\s*([A-Za-z0-9_#-]{1,16}(?:\s*[,;]\s*[A-Za-z0-9_#-]{1,16})*)\s*\]/g;

interface CheckedAnswer {
  /** The answer with a `[id]` marker per kept citation; markers of dropped ones removed. */
  answer: string;
  /** Ids of cited passages that this run retrieved, in order of first mention (text, then the list). */
  cited: string[];
  /** Cited ids no search of this run returned, each once: dropped. */
  dropped: string[];
}

/**
 * Keeps only citations of passages this run retrieved. A model may cite an id it invented or
 * remembered from elsewhere; such a citation is removed from the text and the list and reported in
 * `dropped`, so every source the run returns is a passage it actually read.
 */
export function checkCitations(
  answer: string,
  citations: readonly string[],
  passages: readonly Pick<RetrievedPassage, 'id'>[],
): CheckedAnswer {
  const known = new Set(passages.map((passage) => passage.id));
  const cited: string[] = [];
  const dropped: string[] = [];
  const note = (raw: string): string | null => {
    const id = normalizeId(raw);
    if (id.length === 0) return null;
    if (known.has(id)) {
      if (!cited.includes(id)) cited.push(id);
      return id;
    }
    if (!dropped.includes(id)) dropped.push(id);
    return null;
  };
  const text = answer.replace(MARKER, (_match, group: string) => {
    const kept = group
      .split(/[,;]/)
      .map(note)
      .filter((id): id is string => id !== null);
    return kept.length > 0 ? ` ${kept.map((id) => `[${id}]`).join('')}` : '';
  });
  for (const raw of citations) note(raw);
  return { answer: text.trim(), cited, dropped };
}

function normalizeId(raw: string): string {
  return raw.replace(/[[\]#\s]/g, '').toLowerCase();
}
