import { extractTextItems, getDocumentProxy, getMeta } from 'unpdf';
import { parseError } from './document-parse-error.js';
import { findPageFurniture } from './page-furniture.js';
import { collapseWhitespace, type Block, type DocumentMetadata, type ParsedDocument } from './parsed-document.js';
import { readSecCover } from '../../../shared/retrieval/sec-filings/sec-cover.js';

interface Line {
  page: number;
  text: string;
  /** Font size of the line's largest text. */
  size: number;
  /** Baseline, from the bottom of the page. */
  y: number;
}

interface TextItem {
  str: string;
  y: number;
  fontSize: number;
  hasEOL: boolean;
}

/** Heading lines are at least this much larger than body text. */
const HEADING_RATIO = 1.2;
/** A baseline gap larger than this many font sizes starts a new paragraph (wrapped lines sit ~1.2 apart). */
const PARAGRAPH_GAP = 1.5;

const round = (size: number) => Math.round(size * 2) / 2;

/** Items → lines: a line ends where pdf.js says (hasEOL) or where the baseline moves. */
function linesOf(items: readonly TextItem[], page: number): Line[] {
  const lines: Line[] = [];
  let current: Line | null = null;
  const end = () => {
    if (current && current.text.trim()) lines.push({ ...current, text: collapseWhitespace(current.text) });
    current = null;
  };
  for (const item of items) {
    if (
      current !== null &&
      Math.abs((current as Line).y - item.y) > Math.max((current as Line).size, item.fontSize) * 0.5
    )
      end();
    if (item.str) {
      current ??= { page, text: '', size: 0, y: item.y };
      current.text += item.str;
      if (item.str.trim()) current.size = Math.max(current.size, item.fontSize);
    }
    if (item.hasEOL) end();
  }
  end();
  return lines;
}

/** The font size most of the text is set in (weighted by characters). */
function bodySize(lines: readonly Line[]): number {
  const weight = new Map<number, number>();
  for (const line of lines) weight.set(round(line.size), (weight.get(round(line.size)) ?? 0) + line.text.length);
  return [...weight.entries()].sort((left, right) => right[1] - left[1])[0]?.[0] ?? 0;
}

function joinLines(previous: string, next: string): string {
  // A word hyphenated at the end of a line continues on the next.
  if (/\p{L}-$/u.test(previous) && /^\p{Ll}/u.test(next)) return previous.slice(0, -1) + next;
  return `${previous} ${next}`;
}

/** The largest text of the first page with words in it, when it is set larger than the rest of that page. */
function firstPageHeading(lines: readonly Line[]): string | null {
  const firstPage = lines[0]?.page;
  const page = lines.filter(
    (line) => line.page === firstPage && /\p{L}{2}/u.test(line.text) && line.text.length <= 200,
  );
  const largest = Math.max(0, ...page.map((line) => line.size));
  const body = bodySize(page);
  if (largest <= 0 || largest < body * HEADING_RATIO) return null;
  // A title set on two lines is one title.
  return collapseWhitespace(
    page
      .filter((line) => line.size === largest)
      .slice(0, 2)
      .map((line) => line.text)
      .join(' '),
  );
}

/** PDF metadata titles are often a file name, an id or "Untitled": only words are a title. */
function usableMetaTitle(value: unknown): string | null {
  const title = typeof value === 'string' ? collapseWhitespace(value) : '';
  if (
    !title ||
    /^untitled|^microsoft (word|powerpoint)|\.(docx?|pdf|pptx?)$/i.test(title) ||
    !/\p{L}{3}/u.test(title) ||
    /^[\d\s_.-]+$/.test(title)
  )
    return null;
  return title;
}

/**
 * PDF → text per page (unpdf, i.e. pdf.js, no native code). Lines set clearly larger than the body
 * text become headings (their level from the rank of their size), so PDF chunks get heading paths too;
 * lines are joined into paragraphs unless a larger vertical gap separates them. A PDF without a text
 * layer (a scan) fails: OCR is not part of agentq.
 */
export async function parsePdf(bytes: Uint8Array): Promise<ParsedDocument> {
  let document;
  try {
    // pdf.js may detach the buffer it is given: hand it a copy.
    // Verbosity 0: pdf.js's warnings about odd files would otherwise go to the console of the worker.
    document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'PasswordException')
      throw parseError('the PDF is protected by a password; remove the protection and ingest it again', error);
    throw parseError(`the PDF cannot be read (${(error as Error).message}); it may be damaged or truncated`, error);
  }
  try {
    const [{ info }, { items, totalPages }] = await Promise.all([
      getMeta(document).catch(() => ({ info: {} as Record<string, unknown> })),
      extractTextItems(document),
    ]);
    const allLines = items.flatMap((pageItems, index) => linesOf(pageItems, index + 1));
    // Headers, footers, page numbers and contents entries are not content: kept out of chunks, so out of answers.
    const { drop } = findPageFurniture(allLines);
    const lines = allLines.filter((_line, index) => !drop.has(index));
    if (allLines.length === 0)
      throw parseError(
        `the PDF has no text layer (${totalPages} pages of images, e.g. a scan); run it through OCR first`,
      );
    const body = bodySize(lines);
    const isHeading = (line: Line) =>
      body > 0 && line.size >= body * HEADING_RATIO && line.text.length <= 200 && /\p{L}/u.test(line.text);
    const headingSizes = [...new Set(lines.filter(isHeading).map((line) => round(line.size)))].sort(
      (left, right) => right - left,
    );

    const blocks: Block[] = [];
    let paragraph: Line | null = null;
    let last: Line | null = null;
    const flush = () => {
      if (paragraph) blocks.push({ kind: 'paragraph', text: paragraph.text, page: paragraph.page });
      paragraph = null;
    };
    for (const line of lines) {
      if (isHeading(line)) {
        flush();
        const previous = blocks.at(-1);
        const level = Math.min(6, headingSizes.indexOf(round(line.size)) + 1);
        // A heading set on two lines is one heading.
        if (
          previous?.kind === 'heading' &&
          previous.level === level &&
          previous.page === line.page &&
          last &&
          isHeading(last)
        ) {
          blocks[blocks.length - 1] = { ...previous, text: `${previous.text} ${line.text}` };
        } else {
          blocks.push({ kind: 'heading', level, text: line.text, page: line.page });
        }
      } else {
        const gap = last && last.page === line.page ? last.y - line.y : Number.POSITIVE_INFINITY;
        const current = paragraph as Line | null;
        if (current && last && !isHeading(last) && gap > 0 && gap <= Math.max(last.size, line.size) * PARAGRAPH_GAP) {
          paragraph = { ...current, text: joinLines(current.text, line.text) };
        } else {
          flush();
          paragraph = { ...line };
        }
      }
      last = line;
    }
    flush();
    const cover = readSecCover(allLines.filter((line) => line.page <= 2).map((line) => line.text));
    const metadata: DocumentMetadata | undefined = cover
      ? { company: cover.company, form: cover.form, ...(cover.periodEnded ? { periodEnded: cover.periodEnded } : {}) }
      : undefined;
    const title =
      cover?.title ??
      firstPageHeading(lines) ??
      usableMetaTitle(info.Title) ??
      blocks.find((block) => block.kind === 'heading')?.text ??
      null;
    return { type: 'pdf', title, pages: totalPages, blocks, ...(metadata ? { metadata } : {}) };
  } finally {
    await document.destroy().catch(() => undefined);
  }
}
