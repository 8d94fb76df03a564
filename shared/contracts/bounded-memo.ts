/**
 * What a full memo drops to take a new key:
 *  - `all`: everything. The memos of pure functions of a text (stems, token counts, terms) are read far
 *    more often than they are written, and a lookup stays one Map read with no recency to keep.
 *  - `oldest`: the entry stored the longest ago (storing a key again makes it the newest). For memos whose
 *    values are dear to rebuild (embedding vectors), where losing them all at once would be felt.
 */
export type MemoEviction = 'all' | 'oldest';

export interface BoundedMemoOptions {
  /** Entries kept at the most. */
  limit: number;
  /** @default 'all' */
  evict?: MemoEviction;
}

/**
 * A memo whose memory stays bounded whatever the input: a cache of values that can always be computed
 * again, never a record.
 */
export class BoundedMemo<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly limit: number;
  private readonly evictOldest: boolean;

  constructor({ limit, evict = 'all' }: BoundedMemoOptions) {
    this.limit = Math.max(1, limit);
    this.evictOldest = evict === 'oldest';
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Keeps `value` under `key` (replacing any value it had), dropping what the eviction policy says when full. */
  set(key: K, value: V): V {
    if (this.evictOldest) {
      // A Map iterates in insertion order: deleted and set again, the key is the newest; the first is the oldest.
      this.entries.delete(key);
      this.entries.set(key, value);
      if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
      return value;
    }
    if (this.entries.size >= this.limit && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }

  /** The value kept under `key`, or `compute(key)` kept and returned. */
  getOrSet(key: K, compute: (key: K) => V): V {
    const known = this.entries.get(key);
    return known === undefined ? this.set(key, compute(key)) : known;
  }
}
