import { createHash } from 'node:crypto';
import type { RedisConnection } from '../redis/connect-redis.js';
import type { Keys } from './keys.js';

/**
 * What an answer is cached under, besides the tenant: the same question asked of the same collection by
 * the same graph version and model, with the same options, finds it.
 */
export interface AnswerCacheScope {
  collection: string;
  /** The graph's name and version (`rag-agent`, `1`): a new version answers afresh. */
  graph: string;
  graphVersion: string;
  /** The model that answers (`<provider>:<model id>`), or `extractive`. */
  model: string;
  question: string;
  /** Whatever else shapes the answer (iterations, citations, sources, top_k, tools, guardrails), as JSON values. */
  options: Record<string, unknown>;
}

/** A document an answer cites, at the version (content hash) the answer was made from. */
export interface CitedDocument {
  docId: string;
  contentHash: string;
}

/** A cached answer: the run that made it, when, what it returned, and the documents it cites. */
export interface AnswerCacheEntry {
  runId: string;
  /** ISO 8601: when the answer was stored. */
  at: string;
  output: unknown;
  cited: CitedDocument[];
}

/** A lookup: the entry when every cited document is as it was; else why not (`stale`: these documents changed or are gone). */
export type AnswerCacheLookup =
  | { hit: true; entry: AnswerCacheEntry }
  | { hit: false; reason: 'absent' }
  | { hit: false; reason: 'stale'; changed: string[] };

/** The generations hash's field that clears every collection at once. */
const ALL_COLLECTIONS = '*';

/**
 * "What is the revenue?  " and "what is the revenue" are one question: Unicode NFKC, lower case, runs of
 * white space as one space, and no trailing punctuation.
 */
export function normalizeQuestion(question: string): string {
  return question
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/[\s\p{P}]+$/u, '');
}

/**
 * A tenant's answer cache (opt-in per run: the rag-agent's `answer_cache`). An entry is one Redis string
 * with a TTL under the tenant's `{docs:<tenant>}` tag, keyed by a hash of its scope and of the collection's
 * generation (a counter `clear` bumps, so clearing is one command however many entries there are; the old
 * entries are never found again and expire with their TTL).
 *
 * Documents that change do not change the key: a lookup checks the documents the entry cites against
 * their records now (same content hash, still there), so an edit of one document misses only the answers
 * that cite it. A document added since is not looked at: an answer that a new document would have made
 * better is still a hit until it expires or the collection is cleared.
 */
export class AnswerCache {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    private readonly options: { ttlSeconds: number },
  ) {}

  async lookup(tenant: string, scope: AnswerCacheScope): Promise<AnswerCacheLookup> {
    const json = await this.redis.get(await this.entryKey(tenant, scope));
    if (json === null) return { hit: false, reason: 'absent' };
    const entry = JSON.parse(json) as AnswerCacheEntry;
    const changed = await this.changedDocuments(tenant, entry.cited);
    return changed.length === 0 ? { hit: true, entry } : { hit: false, reason: 'stale', changed };
  }

  /** Stores (or replaces) the answer to `scope`'s question for the TTL. */
  async store(tenant: string, scope: AnswerCacheScope, entry: AnswerCacheEntry): Promise<void> {
    await this.redis.set(await this.entryKey(tenant, scope), JSON.stringify(entry), 'EX', this.options.ttlSeconds);
  }

  /** The content hashes of `docIds`' indexed versions now (a document without one is left out). */
  async currentVersions(tenant: string, docIds: readonly string[]): Promise<CitedDocument[]> {
    const hashes = await this.contentHashes(tenant, docIds);
    return docIds.flatMap((docId, index) => (hashes[index] ? [{ docId, contentHash: hashes[index] }] : []));
  }

  /** Answers cached before this are never found again: of one collection, or (no collection) of every one. */
  async clear(tenant: string, { collection }: { collection?: string } = {}): Promise<void> {
    await this.redis.hincrby(this.keys.documents(tenant).answer('generations'), collection ?? ALL_COLLECTIONS, 1);
  }

  private async entryKey(tenant: string, scope: AnswerCacheScope): Promise<string> {
    const keys = this.keys.documents(tenant);
    const [collectionGeneration, allGeneration] = await this.redis.hmget(
      keys.answer('generations'),
      scope.collection,
      ALL_COLLECTIONS,
    );
    const hash = createHash('sha256')
      .update(
        JSON.stringify([
          scope.collection,
          Number(collectionGeneration ?? 0),
          Number(allGeneration ?? 0),
          scope.graph,
          scope.graphVersion,
          scope.model,
          normalizeQuestion(scope.question),
          canonical(scope.options),
        ]),
      )
      .digest('hex');
    return keys.answer(hash);
  }

  private async changedDocuments(tenant: string, cited: readonly CitedDocument[]): Promise<string[]> {
    const hashes = await this.contentHashes(
      tenant,
      cited.map((document) => document.docId),
    );
    return cited.filter((document, index) => hashes[index] !== document.contentHash).map((document) => document.docId);
  }

  private async contentHashes(tenant: string, docIds: readonly string[]): Promise<(string | null)[]> {
    if (docIds.length === 0) return [];
    const keys = this.keys.documents(tenant);
    const pipeline = this.redis.pipeline();
    for (const docId of docIds) pipeline.hget(keys.record(docId), 'contentHash');
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, hash]) => {
      if (error) throw error;
      return typeof hash === 'string' && hash !== '' ? hash : null;
    });
  }
}

/** JSON with object keys sorted, so equal options make equal keys whatever order they came in. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}
