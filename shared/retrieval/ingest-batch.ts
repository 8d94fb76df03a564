import type { DocumentType } from './document-record.js';

/**
 * What became of one document of a batch: `indexed` (new or changed, now searchable), `unchanged` (same
 * bytes as the indexed version: nothing done), `failed` (`error` says why), `superseded` (a newer
 * version was handed in meanwhile) or `deleted` (deleted before a worker got to it).
 */
export type IngestOutcome = 'indexed' | 'unchanged' | 'failed' | 'superseded' | 'deleted';

export interface IngestItemResult {
  item: number;
  docId: string | null;
  path: string;
  status: IngestOutcome;
  type?: DocumentType;
  title?: string;
  chunks?: number;
  error?: { code: string; message: string };
}

/** A batch's progress: `done` counts every finished document that did not fail. */
export interface IngestProgress {
  batchId: string;
  tenant: string;
  collection: string;
  total: number;
  done: number;
  failed: number;
  /** done + failed = total. */
  finished: boolean;
  /** Why the hand-in broke off, when it did (the documents not handed in are failed with it). */
  error?: string;
  createdAt: string;
  updatedAt: string;
  /** Results of the finished documents, by item. */
  documents: IngestItemResult[];
}
