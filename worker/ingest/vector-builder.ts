import { randomBytes } from 'node:crypto';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { BoundedMemo } from '../../shared/contracts/bounded-memo.js';
import { toAgentqError } from '../../shared/contracts/errors.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import type { VectorStore, VectorUpdate } from '../../shared/ports/vector-store.js';
import type { Keys } from '../../shared/store/keys.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { luaScript } from '../../shared/redis/lua-script.js';

/** Chunks read and embedded per round: one write of their vectors, and the lease renewed between rounds. */
const PAGE_SIZE = 64;
/** Vectors of texts embedded lately, by text: a chunk repeated in many documents (a filing's boilerplate) is embedded once. */
const REPEATS_KEPT = 4096;
/** How often a builder that yields to documents in hand looks again. */
const YIELD_MS = 250;
/** Waits after a failed round, doubling up to the last (a provider down, a store locked). */
const BACKOFF_MS = [1000, 5000, 30_000, 60_000];

// Compare-and-renew and compare-and-delete: only the owner touches its lease.
const RENEW = luaScript(new URL('./lua/renew-lease-1.lua', import.meta.url));
const RELEASE = luaScript(new URL('./lua/release-lease-1.lua', import.meta.url));

interface VectorBuilderOptions {
  redis: RedisConnection;
  keys: Keys;
  /** Must have `pendingVectors` and `setVectors` (the embedded store). */
  vectorStore: () => VectorStore;
  /** Embeds the chunks (`input: 'document'`). */
  embedder: Embedder;
  logger: Logger;
  /** How long a collection's lease lasts unless renewed: a killed worker's collections are taken over after it. */
  leaseMs: number;
  /** How often an idle builder looks for collections other processes wrote. @default 2000 */
  pollMs?: number;
  /**
   * True while this process has documents in hand (the ingest processor): it embeds nothing meanwhile
   * and gives back its lease between pages, so parsing goes first and documents become searchable at
   * lexical speed; vectors follow once it is free (or on an idle process). @default never busy
   */
  busy?: () => boolean;
}

/**
 * Adds the dense vectors of chunks that ingestion wrote without them, in the background: ingest makes a
 * document searchable by its words as soon as its chunks are written, and names its collection in
 * `vectorsPending`; this loop (one per worker process that ingests, with an embedder) takes each such
 * collection under a lease, reads the chunks still without a vector (the store is the record of what is
 * left, so nothing is lost to a crash), embeds them a page at a time and writes each page's vectors at
 * once. A worker killed mid-way loses at most the page in hand: its lease lapses and whichever worker
 * takes the collection next (the same one restarted) carries on from the chunks still without a vector.
 * In the steady state each chunk is embedded once: one process per collection at a time, and a vector
 * is written only onto the text it was computed from (`setVectors`).
 */
export class VectorBuilder {
  private readonly owner = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly pollMs: number;
  private readonly repeats = new BoundedMemo<string, readonly number[]>({ limit: REPEATS_KEPT, evict: 'oldest' });
  private readonly abort = new AbortController();
  private closed = false;
  private wakeUp: (() => void) | undefined;
  /** Woken while busy: the next wait returns at once (a collection named meanwhile is not left for a poll). */
  private woken = false;
  private loop: Promise<void> | undefined;
  private failures = 0;

  constructor(private readonly options: VectorBuilderOptions) {
    this.pollMs = options.pollMs ?? 2000;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Ingest wrote chunks of this collection without vectors: note it (for every worker) and start on it. */
  async added(tenant: string, collection: string): Promise<void> {
    await this.options.redis.sadd(this.options.keys.vectorsPending(), memberOf(tenant, collection));
    this.wakeUp?.();
  }

  /** Stops after the page in hand (its vectors are dropped, and embedded again by whoever goes on). */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort(new Error('the worker is shutting down'));
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { redis, keys, logger } = this.options;
    while (!this.closed) {
      // Documents in hand: they become searchable first, at lexical speed; their vectors follow.
      if (this.options.busy?.()) {
        await this.sleep(YIELD_MS);
        continue;
      }
      let worked = false;
      try {
        const members = await redis.smembers(keys.vectorsPending());
        for (const member of members) {
          if (this.closed) break;
          const target = parseMember(member);
          if (!target) {
            await redis.srem(keys.vectorsPending(), member);
            continue;
          }
          worked = (await this.build(target.tenant, target.collection, member)) || worked;
        }
        this.failures = 0;
      } catch (error) {
        if (this.closed) break;
        const failure = toAgentqError(error);
        const waitMs = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)]!;
        this.failures += 1;
        logger.warn(
          { code: failure.code, err: failure.message, retryInMs: waitMs },
          'adding vectors failed; will retry',
        );
        await this.sleep(waitMs);
        continue;
      }
      if (!worked) await this.sleep(this.pollMs);
    }
  }

  /** Adds the collection's missing vectors if no other process is; → whether it did any. */
  private async build(tenant: string, collection: string, member: string): Promise<boolean> {
    const { redis, keys, leaseMs, logger } = this.options;
    const lease = keys.documents(tenant).vectorLease(collection);
    if ((await redis.set(lease, this.owner, 'PX', leaseMs, 'NX')) !== 'OK') return false;
    const store = this.options.vectorStore();
    const started = Date.now();
    let added = 0;
    // Kept alive while a page is embedded, however long that takes (low-priority threads on a busy machine).
    const heartbeat = setInterval(
      () => void redis.eval(RENEW, 1, lease, this.owner, leaseMs).catch(() => undefined),
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      for (;;) {
        if (this.closed) return added > 0;
        const pending = await store.pendingVectors!(tenant, collection, { limit: PAGE_SIZE });
        if (pending.length === 0) {
          await redis.srem(keys.vectorsPending(), member);
          // An ingest that wrote more chunks after the read above: its mark may have just been removed.
          if ((await store.pendingVectors!(tenant, collection, { limit: 1 })).length === 0) break;
          await redis.sadd(keys.vectorsPending(), member);
          continue;
        }
        // Parsing first: the lease goes back (another, idle process may carry on) until this one is free.
        if (this.options.busy?.()) return added > 0;
        const vectors = await this.embed(pending.map((record) => record.text));
        const updates: VectorUpdate[] = pending.map((record, index) => ({ ...record, vector: vectors[index]! }));
        // Renewed before writing. Lapsed (this process stalled past it): taken again if free; held by another, left to it.
        if (
          (await redis.eval(RENEW, 1, lease, this.owner, leaseMs)) !== 1 &&
          (await redis.set(lease, this.owner, 'PX', leaseMs, 'NX')) !== 'OK'
        ) {
          logger.warn({ tenant, collection }, 'another worker took over this collection’s vectors; leaving it');
          return added > 0;
        }
        added += await store.setVectors!(tenant, collection, updates);
      }
    } finally {
      clearInterval(heartbeat);
      await redis.eval(RELEASE, 1, lease, this.owner).catch(() => undefined);
    }
    if (added > 0)
      logger.info(
        { tenant, collection, vectors: added, ms: Date.now() - started },
        'vectors added; the collection is fully embedded',
      );
    return added > 0;
  }

  /** Each distinct text once; texts met lately (repeated chunks) from memory. */
  private async embed(texts: readonly string[]): Promise<(readonly number[])[]> {
    const missing = [...new Set(texts.filter((text) => !this.repeats.has(text)))];
    if (missing.length > 0) {
      const { vectors } = await this.options.embedder.embed(missing, {
        abortSignal: this.abort.signal,
        input: 'document',
      });
      missing.forEach((text, index) => this.repeats.set(text, vectors[index]!));
    }
    return texts.map((text) => this.repeats.get(text)!);
  }

  private wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || this.closed) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        this.woken = false;
        resolve();
      };
      timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}

function memberOf(tenant: string, collection: string): string {
  return JSON.stringify([tenant, collection]);
}

function parseMember(member: string): { tenant: string; collection: string } | null {
  try {
    const value: unknown = JSON.parse(member);
    if (Array.isArray(value) && value.length === 2 && value.every((part) => typeof part === 'string'))
      return { tenant: value[0] as string, collection: value[1] as string };
  } catch {
    // not ours: dropped by the caller
  }
  return null;
}
