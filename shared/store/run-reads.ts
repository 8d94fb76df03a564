import type { Message, RunRecord, StepRecord } from '../contracts/run-record.js';
import {
  decodeCursor,
  encodeCursor,
  parseMeta,
  parseState,
  runRecordOf,
  toRunRecord,
  type RunMeta,
} from './run-meta.js';
import type { RunStoreContext } from './run-store-context.js';
import type { ListFilter } from './run-store-types.js';
import { slotPipeline } from './slot-pipeline.js';
import { asRedisFaultError } from '../redis/redis-fault.js';
import { SharedHistory } from './shared-history.js';

/**
 * A listing drops an index entry only on positive evidence that its run is gone: a read that succeeded
 * and found no meta, of a run created longer ago than this. On a Redis Cluster a run's index entry and
 * its keys are written by pipelines to different nodes at once, so a young entry may be read before its
 * run exists.
 */
const PRUNE_GRACE_MS = 60_000;

/**
 * Which part of a list to read: `limit` items from position `from` (0-based), or the last `limit`
 * without `from`; `maxBytes` cuts the window after the item that passes that many bytes of JSON.
 */
export interface ListWindowRequest {
  from?: number;
  limit: number;
  maxBytes?: number;
}

/** A window of a list: its items, the position of the first, the list's length and where the next window starts. */
export interface ListWindow<T> {
  items: T[];
  from: number;
  total: number;
  /** The position after the last item returned; null when the list ends there. */
  next: number | null;
}

/** Reading runs: a run's meta, record, state, steps and messages, and a tenant's runs page by page. */
export class RunReads {
  /** A conversation turn's history: the earlier turns' stretches it starts with, then its own messages. */
  readonly history: SharedHistory;

  constructor(private readonly context: RunStoreContext) {
    this.history = new SharedHistory(context);
  }

  async get(runId: string): Promise<RunMeta | null> {
    const fields = await this.context.redis.hgetall(this.context.keys.run(runId).meta);
    return fields.id ? parseMeta(fields) : null;
  }

  async record(runId: string): Promise<RunRecord | null> {
    return runRecordOf(await this.context.redis.hgetall(this.context.keys.run(runId).meta));
  }

  async state(runId: string): Promise<Record<string, unknown>> {
    return parseState(await this.context.redis.hgetall(this.context.keys.run(runId).state));
  }

  async steps(runId: string): Promise<StepRecord[]> {
    const items = await this.context.redis.lrange(this.context.keys.run(runId).steps, 0, -1);
    return items.map((item) => JSON.parse(item) as StepRecord);
  }

  /** The run's history; `from` skips the messages before that index (a summarised history's prompt needs only the rest). */
  async messages(runId: string, from = 0): Promise<Message[]> {
    const segments = await this.history.segmentsOf(runId);
    const items =
      segments.length === 0
        ? await this.context.redis.lrange(this.context.keys.run(runId).messages, Math.max(0, from), -1)
        : await this.history.range(runId, segments, Math.max(0, from), -1);
    return items.map((item) => JSON.parse(item) as Message);
  }

  /** A window of the run's committed steps in commit order (see ListWindowRequest), read with LRANGE. */
  async stepWindow(runId: string, request: ListWindowRequest): Promise<ListWindow<StepRecord>> {
    return this.window<StepRecord>(this.context.keys.run(runId).steps, request);
  }

  /** A window of the run's history (its messages, oldest first), read with LRANGE. */
  async messageWindow(runId: string, request: ListWindowRequest): Promise<ListWindow<Message>> {
    const key = this.context.keys.run(runId).messages;
    const segments = await this.history.segmentsOf(runId);
    if (segments.length === 0) return this.window<Message>(key, request);
    // The window's positions are the whole history's: the shared stretches, then the run's own list.
    const base = segments.reduce((sum, [, count]) => sum + count, 0);
    const total = base + (await this.context.redis.llen(key));
    const [start, stop] = windowBounds(request, total);
    const raw = stop < start ? [] : await this.history.range(runId, segments, start, stop);
    return cutWindow<Message>(raw, start, total, request.maxBytes);
  }

  /**
   * At most `limit` items of a list and its length, in one MULTI: the window's positions stay true while
   * commits append to the list. Only the window crosses the wire, so what one read costs does not grow
   * with the run.
   */
  private async window<T>(key: string, { from, limit, maxBytes }: ListWindowRequest): Promise<ListWindow<T>> {
    const [start, stop] = from === undefined ? [-limit, -1] : [from, from + limit - 1];
    const replies = await this.context.redis.multi().llen(key).lrange(key, start, stop).exec();
    const failed = replies?.find(([error]) => error)?.[0];
    if (!replies || failed) throw failed ?? new Error(`the read of ${key} was discarded`);
    const total = replies[0]![1] as number;
    const raw = replies[1]![1] as string[];
    const first = from === undefined ? total - raw.length : Math.min(from, total);
    return cutWindow<T>(raw, first, total, maxBytes);
  }

  /**
   * A tenant's runs, newest first. The cursor is opaque; a full page always carries one. A run whose read
   * fails or times out fails the page (REDIS_UNAVAILABLE, retryable): a page is never short on that account.
   */
  async list(
    tenant: string,
    { status, graph, since, until, errorCode, limit = 50, cursor }: ListFilter = {},
  ): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
    const key = this.context.keys.tenantRuns(tenant);
    const runs: RunRecord[] = [];
    let [maxScore, afterId] = cursor
      ? decodeCursor(cursor)
      : [until === undefined ? '+inf' : `(${until}`, null as string | null];
    const batch = limit * 2 + 10;
    const now = Date.now();
    for (let round = 0; round < 20 && runs.length < limit; round += 1) {
      const page = await this.context.redis
        .zrevrangebyscore(key, maxScore, since === undefined ? '-inf' : since, 'WITHSCORES', 'LIMIT', 0, batch)
        .catch((error: unknown) => {
          throw asRedisFaultError(error, `list the runs of tenant ${tenant}`);
        });
      const entries: [string, string][] = [];
      for (let i = 0; i < page.length; i += 2) {
        const id = page[i]!;
        const score = page[i + 1]!;
        // Same-score entries come in descending id order; skip those a previous page returned.
        if (afterId !== null && score === maxScore && id >= afterId) continue;
        entries.push([id, score]);
      }
      if (entries.length === 0) break;
      // The tenant's runs are spread over the shards: their metas are read per slot, all at once.
      const pipeline = slotPipeline(this.context.redis);
      for (const [id] of entries) pipeline.hgetall(this.context.keys.run(id).meta);
      const metas = (await pipeline.exec()) ?? [];
      const gone: string[] = [];
      for (let i = 0; i < entries.length && runs.length < limit; i += 1) {
        const [id, score] = entries[i]!;
        const [error, fields] = metas[i] ?? [new Error('no reply from the pipeline'), null];
        // A read that failed or timed out says nothing about the run: the page fails (retryably) rather
        // than come back short, and nothing is dropped from the index on its account.
        if (error) throw asRedisFaultError(error, `list the runs of tenant ${tenant}`);
        [maxScore, afterId] = [score, id];
        const meta = fields as Record<string, string> | null;
        if (!meta?.id) {
          if (Number(score) < now - PRUNE_GRACE_MS) gone.push(id);
          continue;
        }
        const parsed = parseMeta(meta);
        if (parsed.tenant !== tenant || (status && parsed.status !== status) || (graph && parsed.graph !== graph))
          continue;
        if (errorCode && parsed.error?.code !== errorCode) continue;
        runs.push(toRunRecord(parsed));
      }
      // Tidying only (the reconciler trims the rest): a listing that read its runs stands if this fails.
      if (gone.length > 0) await this.context.redis.zrem(key, ...gone).catch(() => undefined);
      if (page.length < batch * 2) break;
    }
    return { runs, nextCursor: runs.length >= limit && afterId !== null ? encodeCursor(maxScore, afterId) : null };
  }
}

/** The window's first and last positions (inclusive) in a list of `total` items. */
function windowBounds({ from, limit }: ListWindowRequest, total: number): [number, number] {
  const start = from === undefined ? Math.max(0, total - limit) : Math.min(from, total);
  return [start, Math.min(total, start + limit) - 1];
}

/** The window of `raw` (read from position `first`), cut after `maxBytes` of JSON. */
function cutWindow<T>(raw: string[], first: number, total: number, maxBytes: number | undefined): ListWindow<T> {
  let kept = raw.length;
  if (maxBytes !== undefined) {
    // Whole items only, and at least one, so a page always moves on.
    let bytes = 0;
    kept = 0;
    for (const item of raw) {
      bytes += item.length;
      if (kept > 0 && bytes > maxBytes) break;
      kept += 1;
    }
  }
  const items = raw.slice(0, kept).map((item) => JSON.parse(item) as T);
  return { items, from: first, total, next: first + kept < total ? first + kept : null };
}
