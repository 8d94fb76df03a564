/** A line of a paged document, in reading order. */
interface PagedLine {
  readonly page: number;
  readonly text: string;
}

interface PageFurnitureOptions {
  /**
   * A line counts as a running header or footer when the same text (numbers ignored) sits at the top
   * or bottom of at least this share of the pages. @default 0.4
   */
  repeatShare?: number;
  /** How many lines at the top and at the bottom of a page may be header or footer. @default 3 */
  edgeLines?: number;
  /** A page with at least this many table-of-contents entries is a contents page. @default 4 */
  tocEntries?: number;
}

/** What was removed, for the ingest log and tests. */
interface PageFurnitureReport {
  headersAndFooters: number;
  pageNumbers: number;
  tocLines: number;
}

const PAGE_NUMBER = /^(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:of|\/)\s*\d{1,4})?$/i;
/** "Item 1A. Risk Factors 34", "Note 2 — Financial Instruments ...... 10", "Part II. Other Information 33". */
const TOC_PREFIX =
  /^(?:[a-z]\)|part\s+[ivx]+\.?|item\s+\d+[a-z]?\.?|note\s+\d+\.?|section\s+\d+(?:\.\d+)*\.?|chapter\s+\d+\.?|\d+(?:\.\d+)*\.?)\s*/i;
const TOC_ENTRY = /^[\p{L}(][^$%]{2,180}?(?:\s*\.{2,}\s*|\s+)\d{1,3}$/u;
const DOT_LEADER = /\.{5,}\s*\d{1,4}$|(?:\.\s){4,}\s*\d{1,4}$/;
const TOC_TITLE = /^(?:table of contents|contents|index|page)$/i;

const normalised = (text: string) => text.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();

export function isTocEntry(text: string): boolean {
  return TOC_ENTRY.test(text.replace(TOC_PREFIX, '')) || DOT_LEADER.test(text);
}

/**
 * The lines that are page furniture rather than content: running headers and footers (the same text,
 * numbers aside, at the top or bottom of many pages), page numbers, and table-of-contents entries
 * (a page holding several "title … page" lines, or any dot-leader line). Such lines would otherwise sit
 * in chunks, match every question that shares a word with them, and end up quoted as answers.
 * Returns the indexes of the lines to drop.
 */
export function findPageFurniture(
  lines: readonly PagedLine[],
  { repeatShare = 0.4, edgeLines = 3, tocEntries = 4 }: PageFurnitureOptions = {},
): { drop: Set<number>; report: PageFurnitureReport } {
  const drop = new Set<number>();
  const report: PageFurnitureReport = { headersAndFooters: 0, pageNumbers: 0, tocLines: 0 };
  const byPage = new Map<number, number[]>();
  lines.forEach((line, index) => {
    const indexes = byPage.get(line.page) ?? [];
    indexes.push(index);
    byPage.set(line.page, indexes);
  });
  const pages = byPage.size;
  const edges = new Set<number>();
  for (const indexes of byPage.values()) {
    for (const index of [...indexes.slice(0, edgeLines), ...indexes.slice(-edgeLines)]) edges.add(index);
  }

  // Running headers and footers: need enough pages for "repeated" to mean something.
  if (pages >= 3) {
    const pagesOf = new Map<string, Set<number>>();
    for (const index of edges) {
      const key = normalised(lines[index]!.text);
      const set = pagesOf.get(key) ?? new Set<number>();
      set.add(lines[index]!.page);
      pagesOf.set(key, set);
    }
    const minimum = Math.max(3, Math.ceil(pages * repeatShare));
    for (const index of edges) {
      const key = normalised(lines[index]!.text);
      if ((pagesOf.get(key)?.size ?? 0) >= minimum && !drop.has(index)) {
        drop.add(index);
        report.headersAndFooters += 1;
      }
    }
  }
  for (const index of edges) {
    if (!drop.has(index) && PAGE_NUMBER.test(lines[index]!.text.trim())) {
      drop.add(index);
      report.pageNumbers += 1;
    }
  }

  // Contents pages come first; later pages with "label 12" lines are tables.
  const contentsPages = new Set(
    [...byPage.keys()].sort((left, right) => left - right).slice(0, Math.max(5, Math.ceil(pages * 0.1))),
  );
  for (const [page, indexes] of byPage) {
    const entries = contentsPages.has(page)
      ? indexes.filter((index) => !drop.has(index) && isTocEntry(lines[index]!.text))
      : [];
    // Page references of a contents page run forward; a table of labels and small numbers does not.
    const references = entries.map((index) => Number(/(\d+)$/.exec(lines[index]!.text.trim())![1]));
    const forward = references.slice(1).filter((reference, position) => reference >= references[position]!).length;
    const contentsPage =
      entries.length >= tocEntries &&
      references.every((reference) => reference <= Math.max(pages, 999)) &&
      forward >= (references.length - 1) * 0.8;
    for (const index of indexes) {
      if (drop.has(index)) continue;
      const text = lines[index]!.text.trim();
      if (DOT_LEADER.test(text) || (contentsPage && (entries.includes(index) || TOC_TITLE.test(text)))) {
        drop.add(index);
        report.tocLines += 1;
      }
    }
  }
  return { drop, report };
}
