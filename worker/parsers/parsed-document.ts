import type { DocumentType } from '../../shared/ingest/document-record.js';

export type { DocumentType };

/** A heading of the document (level 1 = top). */
export interface HeadingBlock {
  readonly kind: 'heading';
  readonly level: number;
  readonly text: string;
  /** 1-based page, where the format has pages (PDF; DOCX with explicit page breaks). */
  readonly page: number | null;
}

/** A paragraph (or list item, table cell, code block): text that belongs together. */
export interface ParagraphBlock {
  readonly kind: 'paragraph';
  readonly text: string;
  readonly page: number | null;
}

export type Block = HeadingBlock | ParagraphBlock;

/** What every parser returns: the document's text as blocks in reading order. */
export interface ParsedDocument {
  readonly type: DocumentType;
  /** From the document itself (PDF metadata, `<title>`, first heading); null when it has none. */
  readonly title: string | null;
  /** Pages of a PDF; null for formats without pages. */
  readonly pages: number | null;
  readonly blocks: readonly Block[];
}

/** Whitespace runs (including newlines and non-breaking spaces) as one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/[\s\u00a0\u200b]+/g, ' ').trim();
}
