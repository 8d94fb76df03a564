import type { DocumentType } from '../../shared/retrieval/document-record.js';
import type { ErrorCode } from '../../shared/contracts/errors.js';
import type { DocumentMetadata } from './parsers/parsed-document.js';
import type { Chunk } from './chunker.js';

/** ParsePool → thread. */
export interface ParseRequest {
  id: number;
  bytes: Uint8Array;
  /** File name: a hint between Markdown and plain text. */
  name: string;
  maxTokens: number;
  overlapTokens: number;
}

/** Thread → ParsePool. */
export type ParseReply =
  | {
      id: number;
      ok: true;
      type: DocumentType;
      title: string | null;
      pages: number | null;
      chunks: Chunk[];
      metadata?: DocumentMetadata;
    }
  | { id: number; ok: false; code: ErrorCode; message: string };
