import { randomBytes } from 'node:crypto';
import { isCluster, type RedisConnection } from '../../shared/redis/connect-redis.js';
import type { RunEvent } from '../../shared/contracts/run-record.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { parseEvent } from '../../shared/store/run-meta.js';
import { compareStreamIds } from '../../shared/contracts/stream-cursor.js';

/** One reader's view of a run's committed events, in order, each once. */
export interface RunEventFollower {
  /**
   * The next events after those returned so far: pages of what is committed at once, then an empty answer
   * at once when the follower has caught up (so a caller can flush what it held back), then new events
   * as they come, waiting at most `waitMs` for some ([] when none came). Throws when reading fails.
   */
  next(waitMs: number): Promise<RunEvent[]>;
  /** What is committed after the events returned so far, read directly (the tail of a run that finished). */
  catchUp(): Promise<RunEvent[]>;
  /** Stops following; the hub forgets the run when nobody follows it any more. */
  close(): void;
}

interface RunEventHubOptions {
  /** How long one XREAD blocks. @default 5000 */
  blockMs?: number;
  /** Events per stream per read. @default 500 */
  count?: number;
}

interface Entry {
  runId: string;
  key: string;
  /** The id the hub reads after; null until a follower has caught up (the hub has nothing to read yet). */
  cursor: string | null;
  followers: Set<HubFollower>;
}

/** The runs of one slot group: one blocking reader, one XREAD over all their event streams. */
interface Group {
  shard: number;
  entries: Map<string, Entry>;
  reader: RedisConnection | undefined;
  wakeKey: string;
  wakeCursor: string;
  wakePending: boolean;
}

/**
 * Many event streams over few Redis connections (each SSE stream held a blocking connection
 * of its own — 400 streams, 426 Redis clients and 832 API file descriptors). Each follower reads what is
 * already committed by plain non-blocking reads on the store's connection; from then on one reader per
 * slot group — one for a single Redis, one per shard on a Cluster, where an XREAD must stay in one slot —
 * blocks in a single XREAD over every followed run's stream and hands each new event to that run's
 * followers. A run followed for the first time wakes the reader through a small stream of the hub's own
 * named in the same XREAD; a group nobody follows any more closes its connection.
 */
export class RunEventHub {
  private readonly groups = new Map<number, Group>();
  private readonly id = randomBytes(6).toString('hex');
  private readonly blockMs: number;
  private readonly count: number;
  private closed = false;

  /** `connect` makes a blocking connection (no command timeout) for a group's reader. */
  constructor(
    readonly store: RedisRunStore,
    private readonly connect: () => RedisConnection,
    { blockMs = 5000, count = 500 }: RunEventHubOptions = {},
  ) {
    this.blockMs = blockMs;
    this.count = count;
  }

  /** Follows `runId`'s events after `after` ('0-0': from the first). */
  follow(runId: string, after = '0-0'): RunEventFollower {
    const group = this.group(runId);
    const key = this.store.keys.run(runId).events;
    let entry = group.entries.get(key);
    if (!entry) group.entries.set(key, (entry = { runId, key, cursor: null, followers: new Set() }));
    const follower = new HubFollower(this, entry, after);
    entry.followers.add(follower);
    return follower;
  }

  /** Blocking connections open now (one per group with followers). */
  readerCount(): number {
    return [...this.groups.values()].filter((group) => group.reader).length;
  }

  /** Followers attached now, over all runs (zero once every stream has closed). */
  followerCount(): number {
    let count = 0;
    for (const group of this.groups.values()) for (const entry of group.entries.values()) count += entry.followers.size;
    return count;
  }

  close(): void {
    this.closed = true;
    for (const group of this.groups.values()) {
      for (const entry of group.entries.values()) for (const follower of entry.followers) follower.end();
      group.entries.clear();
      this.stop(group);
    }
  }

  /** @internal A follower has read the backlog up to `seen`: the hub reads the rest for it. */
  caughtUp(entry: Entry, seen: string): void {
    if (this.closed) return;
    const group = this.group(entry.runId);
    const added = entry.cursor === null;
    if (added) entry.cursor = seen;
    if (!group.reader) this.start(group);
    else if (added && !group.wakePending) {
      // The reader is blocked in an XREAD that does not name this run: wake it (it re-reads at its next round otherwise).
      group.wakePending = true;
      this.store.redis
        .multi()
        .xadd(group.wakeKey, 'MAXLEN', 1, '*', 'w', '1')
        .pexpire(group.wakeKey, this.blockMs * 4)
        .exec()
        .catch(() => undefined);
    }
  }

  /** @internal */
  unfollow(entry: Entry, follower: HubFollower): void {
    entry.followers.delete(follower);
    if (entry.followers.size > 0) return;
    const group = this.group(entry.runId);
    if (group.entries.get(entry.key) === entry) group.entries.delete(entry.key);
    if (group.entries.size === 0) this.stop(group);
  }

  /** On one Redis every run's stream can share one XREAD; on a Cluster, only the runs of one shard (one slot). */
  private group(runId: string): Group {
    const shard = isCluster(this.store.redis) ? this.store.keys.shardOf(runId) : 0;
    let group = this.groups.get(shard);
    if (!group) {
      group = {
        shard,
        entries: new Map(),
        reader: undefined,
        wakeKey: this.store.keys.eventsWake(shard, this.id),
        wakeCursor: '0-0',
        wakePending: false,
      };
      this.groups.set(shard, group);
    }
    return group;
  }

  private start(group: Group): void {
    const reader = this.connect();
    reader.on('error', () => undefined);
    group.reader = reader;
    void this.read(group, reader);
  }

  private stop(group: Group): void {
    const reader = group.reader;
    group.reader = undefined;
    // A blocked XREAD ends with its connection; the loop sees it is no longer the group's reader and returns.
    reader?.disconnect();
  }

  private async read(group: Group, reader: RedisConnection): Promise<void> {
    while (group.reader === reader) {
      const active = [...group.entries.values()].filter((entry) => entry.cursor !== null);
      group.wakePending = false;
      let reply: [string, [string, string[]][]][] | null;
      try {
        reply = (await reader.xread(
          'COUNT',
          this.count,
          'BLOCK',
          this.blockMs,
          'STREAMS',
          ...active.map((entry) => entry.key),
          group.wakeKey,
          ...active.map((entry) => entry.cursor!),
          group.wakeCursor,
        )) as [string, [string, string[]][]][] | null;
      } catch (error) {
        if (group.reader !== reader) return;
        // Redis went away under the reader: every follower of the group hears it (an SSE stream ends with
        // an `error` event and the client reconnects with Last-Event-ID); the next follower starts afresh.
        for (const entry of group.entries.values()) for (const follower of entry.followers) follower.fail(error);
        group.entries.clear();
        this.stop(group);
        return;
      }
      for (const [key, items] of reply ?? []) {
        if (items.length === 0) continue;
        if (key === group.wakeKey) {
          group.wakeCursor = items.at(-1)![0];
          continue;
        }
        const entry = group.entries.get(key);
        if (!entry) continue; // nobody follows it any more
        const events = items.map(([id, fields]) => parseEvent(id, fields));
        entry.cursor = events.at(-1)!.id;
        for (const follower of entry.followers) follower.push(events);
      }
    }
  }

  /** @internal */
  get pageSize(): number {
    return this.count;
  }
}

class HubFollower implements RunEventFollower {
  private seen: string;
  private queue: RunEvent[] = [];
  /** Live events that came while the backlog was still being read; null once caught up. */
  private held: RunEvent[] | null = [];
  private waiter: (() => void) | undefined;
  private failure: unknown;
  private ended = false;

  constructor(
    private readonly hub: RunEventHub,
    private readonly entry: Entry,
    after: string,
  ) {
    this.seen = after;
  }

  async next(waitMs: number): Promise<RunEvent[]> {
    if (this.failure !== undefined) throw this.failure;
    if (this.ended) return [];
    if (this.held) return this.readBacklog();
    if (this.queue.length === 0 && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = undefined;
      if (this.failure !== undefined) throw this.failure;
    }
    return this.queue.splice(0);
  }

  async catchUp(): Promise<RunEvent[]> {
    const read = await this.hub.store.eventLog.events(this.entry.runId, { after: this.seen, count: this.hub.pageSize });
    return [...this.queue.splice(0), ...this.accept(read)];
  }

  close(): void {
    if (this.ended) return;
    this.end();
    this.hub.unfollow(this.entry, this);
  }

  /** @internal */
  push(events: RunEvent[]): void {
    if (this.held) this.held.push(...events);
    else this.queue.push(...this.accept(events));
    this.waiter?.();
  }

  /** @internal */
  fail(error: unknown): void {
    this.failure = error;
    this.waiter?.();
  }

  /** @internal */
  end(): void {
    this.ended = true;
    this.waiter?.();
  }

  /**
   * One page of what is committed. Caught up when a read finds nothing new: every later event is then
   * either held already (the hub read it meanwhile) or will be read by the hub, which takes over from
   * here. (A stream that ends — a finished run's, up to run-end — is read to its end without the hub.)
   */
  private async readBacklog(): Promise<RunEvent[]> {
    const read = await this.hub.store.eventLog.events(this.entry.runId, { after: this.seen, count: this.hub.pageSize });
    const events = this.accept(read);
    if (events.length > 0) return events;
    this.hub.caughtUp(this.entry, this.seen);
    const held = this.held ?? [];
    this.held = null;
    return this.accept(held);
  }

  /** The events after the last one returned, and remembers the newest. */
  private accept(events: readonly RunEvent[]): RunEvent[] {
    const fresh = events.filter((event) => compareStreamIds(event.id, this.seen) > 0);
    if (fresh.length > 0) this.seen = fresh.at(-1)!.id;
    return fresh;
  }
}
