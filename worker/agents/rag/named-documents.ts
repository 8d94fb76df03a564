import { BoundedMemo } from '../../../shared/contracts/bounded-memo.js';
import type { VectorStore } from '../../../shared/ports/vector-store.js';
import { normalizedTitle } from './rank-passages.js';

/** A document the question names: by its company (metadata from the document itself) or by its title. */
export interface NamedDocument {
  docId: string;
  title: string;
  /** The name as the question says it, e.g. "apple". */
  name: string;
  /** The end of the period the document reports on (its metadata), when it has one. */
  periodEnded?: string;
  /**
   * `company`: the question names the organisation a filing is by, so only that organisation's
   * documents can answer it (search is filtered to them). `title`: the question names the document's
   * subject, a strong hint but not proof (search is boosted toward them).
   */
  kind: 'company' | 'title';
}

/** First chunks looked at for names: one per document, the best lexical matches of the question. */
const CANDIDATES = 40;
const COMPANY_SUFFIX =
  /[,\s]+(?:inc\.?|incorporated|corporation|corp\.?|company|co\.|ltd\.?|limited|llc|plc|n\.v\.|s\.a\.|ag|se|holdings|group)$/i;

/** "Amazon.com, Inc." → ["amazon.com", "amazon"]: how questions name a company. */
export function companyNames(company: string): string[] {
  let name = company.trim();
  while (COMPANY_SUFFIX.test(name)) name = name.replace(COMPANY_SUFFIX, '');
  const names = [name.toLowerCase()];
  const bare = name.replace(/\.(?:com|net|org|io)$/i, '').toLowerCase();
  if (bare !== names[0]) names.push(bare);
  return names.filter((candidate) => /\p{L}{2}/u.test(candidate));
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Compiled name patterns by name, bounded: a collection's titles recur question after question, and compiling one costs more than matching it. */
const patterns = new BoundedMemo<string, RegExp>({ limit: 4096 });

function patternOf(name: string): RegExp {
  return patterns.getOrSet(name, namePattern);
}

/** At module level, so a lookup makes no closure. */
function namePattern(name: string): RegExp {
  return new RegExp(`(?:^|[^\\p{L}\\p{N}])(${escape(name)})(?=$|[^\\p{L}\\p{N}])`, 'giu');
}

/**
 * Where `name` occurs in `query` as whole words ("Apple's" counts); with `properNoun`, only where the
 * question writes it with a capital or a digit first, so a title that is a common word ("Tell") is not
 * taken for a name.
 */
export function mentions(query: string, name: string, { properNoun }: { properNoun: boolean }): boolean {
  // matchAll matches a copy of the pattern: the shared one's lastIndex never moves.
  for (const match of query.matchAll(patternOf(name))) {
    if (!properNoun || /^[\p{Lu}\p{N}]/u.test(match[1]!)) return true;
  }
  return false;
}

/**
 * The documents of a collection that `query` names. Candidates are the first chunks of the documents
 * the query matches lexically (the title and metadata are indexed with every chunk); a candidate is
 * named when the question holds its company's name, or its title (4+ characters, as a proper noun).
 */
export async function findNamedDocuments(
  store: VectorStore,
  tenant: string,
  { query, collection }: { query: string; collection: string },
): Promise<NamedDocument[]> {
  const hits = await store.query(tenant, { text: query, collection, filter: { chunkIndex: 0 }, limit: CANDIDATES });
  const named: NamedDocument[] = [];
  for (const hit of hits) {
    const payload = hit.payload as { docId?: string; title?: string; company?: string; periodEnded?: string };
    if (!payload.docId || named.some((document) => document.docId === payload.docId)) continue;
    const title = payload.title ?? '';
    const company = payload.company
      ? companyNames(payload.company).find((name) => mentions(query, name, { properNoun: false }))
      : undefined;
    if (company) {
      named.push({
        docId: payload.docId,
        title,
        name: company,
        kind: 'company',
        ...(payload.periodEnded ? { periodEnded: payload.periodEnded } : {}),
      });
      continue;
    }
    const name = normalizedTitle(title);
    if (name.length >= 4 && /\p{L}/u.test(name) && mentions(query, name, { properNoun: true }))
      named.push({ docId: payload.docId, title, name, kind: 'title' });
  }
  return named;
}
