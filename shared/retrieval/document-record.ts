import { createHash } from 'node:crypto';

/** Formats agentq ingests, as detected from a document's bytes. */
export const DOCUMENT_TYPES = ['pdf', 'docx', 'html', 'markdown', 'text'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/**
 * `queued`: a version waits for a worker · `indexing`: a worker is on it · `indexed`: its chunks are
 * searchable · `failed`: the latest version could not be indexed (`error` says why; chunks of an earlier
 * version, if any, stay searchable until it is deleted or a good version replaces them).
 */
export const DOCUMENT_STATUSES = ['queued', 'indexing', 'indexed', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/** A document as agentq knows it (one Redis hash; see shared/store/keys.ts). */
export interface DocumentRecord {
  id: string;
  tenant: string;
  collection: string;
  /** From the document (PDF metadata, `<title>`, first heading), else its file name. */
  title: string;
  /** The path or file name it was ingested under; with the collection, it identifies the document. */
  path: string;
  /** Detected from the content once a worker has read it. */
  type: DocumentType | null;
  status: DocumentStatus;
  /** Chunks of the indexed version in the vector store. */
  chunkCount: number;
  /** sha256 of the indexed version's bytes; null until one is indexed. */
  contentHash: string | null;
  /** sha256 of the latest version handed in (equal to contentHash once it is indexed). */
  pendingHash: string | null;
  bytes: number;
  /** Pages of a PDF; null for other formats. */
  pages: number | null;
  error: { code: string; message: string } | null;
  /** The ingest batch that handed in the latest version. */
  batchId: string | null;
  createdAt: string;
  updatedAt: string;
  indexedAt: string | null;
}

/**
 * The id of the document at `path` in a collection of a tenant: deterministic, so ingesting the same path
 * again finds the same document (unchanged → nothing to do; changed → its chunks are replaced), and
 * scoped, so equal paths of two tenants or collections never meet.
 */
export function documentIdFor(tenant: string, collection: string, path: string): string {
  return `doc_${createHash('sha256').update(tenant).update('\0').update(collection).update('\0').update(path).digest('hex').slice(0, 32)}`;
}

export function contentHashOf(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Fields of a DocumentRecord as stored in its Redis hash (strings; JSON where structured). */
export function toDocumentFields(record: Partial<DocumentRecord>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(record)) {
    if (value === undefined) continue;
    fields[name] = value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return fields;
}

export function fromDocumentFields(fields: Record<string, string>): DocumentRecord | null {
  if (!fields.id) return null;
  const orNull = (value: string | undefined) => (value ? value : null);
  return {
    id: fields.id,
    tenant: fields.tenant ?? '',
    collection: fields.collection ?? '',
    title: fields.title ?? '',
    path: fields.path ?? '',
    type: (orNull(fields.type) as DocumentType | null) ?? null,
    status: (fields.status as DocumentStatus | undefined) ?? 'queued',
    chunkCount: Number(fields.chunkCount ?? 0),
    contentHash: orNull(fields.contentHash),
    pendingHash: orNull(fields.pendingHash),
    bytes: Number(fields.bytes ?? 0),
    pages: fields.pages ? Number(fields.pages) : null,
    error: fields.error ? (JSON.parse(fields.error) as { code: string; message: string }) : null,
    batchId: orNull(fields.batchId),
    createdAt: fields.createdAt ?? '',
    updatedAt: fields.updatedAt ?? '',
    indexedAt: orNull(fields.indexedAt),
  };
}
