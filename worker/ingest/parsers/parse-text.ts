import { collapseWhitespace, type Block, type ParsedDocument } from './parsed-document.js';

/** Plain text → paragraphs separated by blank lines (form feeds count as blank lines). No headings, no title. */
export function parseText(text: string): ParsedDocument {
  const blocks: Block[] = text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t\f\v]*\n|\f/)
    .map((paragraph) => collapseWhitespace(paragraph))
    .filter(Boolean)
    .map((paragraph) => ({ kind: 'paragraph', text: paragraph, page: null }));
  return { type: 'text', title: null, pages: null, blocks };
}
