import type { DocumentType } from '../../../shared/retrieval/document-record.js';

export type { DocumentType };

/** A heading of the document (level 1 = top). */
interface HeadingBlock {
  readonly kind: 'heading';
  readonly level: number;
  readonly text: string;
  /** 1-based page, where the format has pages (PDF; DOCX with explicit page breaks). */
  readonly page: number | null;
}

/** A paragraph (or list item, table cell, code block): text that belongs together. */
interface ParagraphBlock {
  readonly kind: 'paragraph';
  readonly text: string;
  readonly page: number | null;
}

export type Block = HeadingBlock | ParagraphBlock;

/** What a document says it is, beyond its title (an SEC filing's cover page); shown in sources and matched against questions. */
export interface DocumentMetadata {
  /** The organisation the document is by or about, e.g. "Amazon.com, Inc.". */
  readonly company?: string;
  /** e.g. "10-Q". */
  readonly form?: string;
  /** The end of the period it reports on, as the document writes it, e.g. "March 31, 2022". */
  readonly periodEnded?: string;
}

/** What every parser returns: the document's text as blocks in reading order. */
export interface ParsedDocument {
  readonly type: DocumentType;
  /** From the document itself (PDF metadata, `<title>`, first heading); null when it has none. */
  readonly title: string | null;
  /** Pages of a PDF; null for formats without pages. */
  readonly pages: number | null;
  readonly blocks: readonly Block[];
  /** @default none */
  readonly metadata?: DocumentMetadata;
}

/** Whitespace runs (including newlines and non-breaking spaces) as one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/[\s\u00a0\u200b]+/g, ' ').trim();
}
