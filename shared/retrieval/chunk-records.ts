import type { Payload, VectorRecord } from '../ports/vector-store.js';
import type { DocumentType } from './document-record.js';

/** What the ingest pipeline stores with every chunk (the vector store's payload). */
export interface ChunkPayload {
  docId: string;
  chunkIndex: number;
  title: string;
  path: string;
  type: DocumentType;
  /** 1-based page of the chunk's start (PDF, DOCX with page breaks); null otherwise. */
  page: number | null;
  /** Headings above the chunk, outermost first. */
  headingPath: string[];
  /** Offsets into the document's extracted text (blocks separated by blank lines). */
  charStart: number;
  charEnd: number;
  /** sha256 of the document version the chunk comes from: replacing a version deletes the others' chunks. */
  contentHash: string;
  /** The organisation the document is by (an SEC filing's registrant): questions naming it find this document's chunks first. @default none */
  company?: string;
  /** The form of a filing, e.g. "10-Q". @default none */
  form?: string;
  /** The end of the period the document reports on, as it writes it. @default none */
  periodEnded?: string;
}

/** What a document says it is beyond its title (see DocumentMetadata in worker/ingest/parsers). */
interface ChunkDocumentMetadata {
  company?: string;
  form?: string;
  periodEnded?: string;
}

interface ChunkLike {
  index: number;
  text: string;
  page: number | null;
  headingPath: string[];
  charStart: number;
  charEnd: number;
}

/** Chunk ids derive from the document and the chunk's position: re-indexing the same version writes the same ids. */
export function chunkId(docId: string, index: number): string {
  return `${docId}.c${index}`;
}

/**
 * A document's chunks as vector-store records. The title and heading path go into `context`, so a
 * question naming the document (or a section) finds its chunks even where their text does not repeat it.
 */
export function toChunkRecords(
  chunks: readonly ChunkLike[],
  document: {
    docId: string;
    title: string;
    path: string;
    type: DocumentType;
    contentHash: string;
    metadata?: ChunkDocumentMetadata;
  },
  vectors?: readonly (readonly number[])[],
): VectorRecord[] {
  return chunks.map((chunk) => {
    const headings =
      chunk.headingPath[0] === document.title ? chunk.headingPath : [document.title, ...chunk.headingPath];
    const payload: ChunkPayload = {
      docId: document.docId,
      chunkIndex: chunk.index,
      title: document.title,
      path: document.path,
      type: document.type,
      page: chunk.page,
      headingPath: chunk.headingPath,
      charStart: chunk.charStart,
      charEnd: chunk.charEnd,
      contentHash: document.contentHash,
      ...document.metadata,
    };
    const vector = vectors?.[chunk.index];
    return {
      id: chunkId(document.docId, chunk.index),
      text: chunk.text,
      context: headings.join(' › '),
      payload: payload as unknown as Payload,
      ...(vector ? { vector } : {}),
    };
  });
}
