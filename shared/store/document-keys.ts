/**
 * A tenant's documents and ingest batches. They share the hash tag `{docs:<tenant>}` (one Redis Cluster
 * slot per tenant), so a Lua script over a document record and its batch stays atomic; the tenant is
 * in every one of these keys.
 */
export interface DocumentKeys {
  /** Hash: one document record. */
  record(docId: string): string;
  /** Sorted set: the document ids of one collection, scored by last update (ms). */
  collection(collection: string): string;
  /** Set: the tenant's collection names. */
  collections: string;
  /** String: an uploaded document's bytes until a worker has indexed them. */
  blob(docId: string, contentHash: string): string;
  /** String: an upload's file while it arrives (in pieces), renamed to its blob once in (one tag: one slot). */
  upload(uploadId: string): string;
  /** Hash: an ingest batch's counters (total, done, failed) and metadata. */
  batch(batchId: string): string;
  /** Hash: an ingest batch's per-document results, by item index (each written once). */
  batchResults(batchId: string): string;
  /** String with a TTL, the owner id of the process adding a collection's vectors: never two; lapses when it dies. */
  vectorLease(collection: string): string;
  /** AnswerCache: entries `answer:<sha256>`, clear counters `answer:generations`. */
  answer(part: string): string;
}
