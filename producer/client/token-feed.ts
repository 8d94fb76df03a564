import { followsInLog } from '../../shared/contracts/stream-cursor.js';
import type { TokenEvent, TokenGapEvent } from '../../shared/contracts/token-event.js';
import type { TokenLog } from '../../shared/store/token-log.js';
import type { TokenHub } from './token-hub.js';

export type TokenFeedEvent = TokenEvent | TokenGapEvent;

interface TokenFeedOptions {
  hub: TokenHub;
  log: TokenLog;
  runId: string;
  /** The last token id the follower had (a resumed stream); null: the tokens from now on. */
  after: string | null;
  /** Gets each kept token once, in log order; tokens the log did not keep as they come; gaps as `token-gap`. */
  deliver: (event: TokenFeedEvent) => void;
}

const PAGE = 500;

/**
 * One follower's tokens of a run, each once and in order, across lost pub/sub messages and reconnects.
 * It watches the run (so its tokens are kept in the run's token log), then subscribes; live tokens are
 * held until `start`, which reads the log after the follower's cursor first. Log ids count up by one, so
 * a live token further on than the next one — the pub/sub connection dropped meanwhile — or a resubscribed
 * connection makes it read the log again after its cursor, holding live tokens meanwhile and dropping
 * those it already had. Subscribing first and deduplicating by id (rather than a blocking XREAD per
 * follower) keeps the API's one pub/sub connection for all its streams and costs a log read only at
 * the seams.
 */
export class TokenFeed {
  private cursor = '0-0';
  /** Live tokens waiting for a log read (null: delivered as they come). */
  private held: TokenEvent[] | null = [];
  private reading: Promise<void> | null = null;
  /** The follower's log had expired: its missed tokens are gone (said once, at the first read). */
  private lostAfter: string | null = null;
  private stalled = false;
  private closed = false;
  private lastWatch = Date.now();
  private unsubscribe: () => void = () => undefined;

  private constructor(private readonly options: TokenFeedOptions) {}

  static async open(options: TokenFeedOptions): Promise<TokenFeed> {
    const feed = new TokenFeed(options);
    const { lastId, existed } = await options.log.watch(options.runId);
    feed.cursor = options.after ?? lastId;
    if (options.after !== null && !existed) {
      feed.lostAfter = options.after;
      feed.cursor = lastId;
    }
    feed.unsubscribe = await options.hub.subscribe(
      options.runId,
      (event) => feed.receive(event),
      () => void feed.catchUp().catch(() => undefined),
    );
    return feed;
  }

  /** The last token id delivered (or the follower's starting point): the token half of its cursor. */
  get position(): string {
    return this.cursor;
  }

  /** Starts delivering: the log's tokens after the cursor, then those held meanwhile, then live ones. */
  start(): Promise<void> {
    return this.catchUp();
  }

  /**
   * Reads what the log kept after the cursor (the run is ending, or messages were lost), delivering
   * live tokens again once caught up. Concurrent calls share one read.
   */
  catchUp(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.lostAfter !== null) {
      this.options.deliver({ type: 'token-gap', runId: this.options.runId, after: this.lostAfter });
      this.lostAfter = null;
    }
    this.held ??= [];
    this.reading ??= this.drain().finally(() => (this.reading = null));
    return this.reading;
  }

  /** Keeps the run's log while followed (its expiry renewed), and retries a read that failed. */
  async refresh(): Promise<void> {
    if (this.closed) return;
    if (Date.now() - this.lastWatch >= this.options.log.ttlMs / 4) {
      this.lastWatch = Date.now();
      const { lastId, existed } = await this.options.log.watch(this.options.runId);
      // Expired while followed: what came since was delivered live, without ids; a new log starts here.
      if (!existed) this.cursor = lastId;
    }
    if (this.stalled) await this.catchUp();
  }

  close(): void {
    this.closed = true;
    this.held = null;
    this.unsubscribe();
  }

  private receive(event: TokenEvent): void {
    if (this.closed) return;
    if (this.held) {
      this.held.push(event);
      return;
    }
    if (this.take(event) === 'jump') {
      this.held = [event];
      void this.catchUp().catch(() => undefined);
    }
  }

  /** Delivers a live token unless it was had already; 'jump': tokens before it were missed. */
  private take(event: TokenEvent): 'ok' | 'jump' {
    if (event.id === undefined) {
      this.options.deliver(event);
      return 'ok';
    }
    const place = followsInLog(this.cursor, event.id);
    if (place === 'jump') return 'jump';
    if (place === 'next') {
      this.cursor = event.id;
      this.options.deliver(event);
    }
    return 'ok';
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        await this.readLog();
        if (this.closed) return;
        const held = this.held ?? [];
        this.held = [];
        const jumped = held.findIndex((event) => this.take(event) === 'jump');
        if (jumped < 0) {
          this.held = null;
          this.stalled = false;
          return;
        }
        // Published after the read but with a hole before it: read again.
        this.held = held.slice(jumped);
      }
    } catch (error) {
      this.stalled = true;
      throw error;
    }
  }

  private async readLog(): Promise<void> {
    const { log, runId, deliver } = this.options;
    for (;;) {
      const entries = await log.read(runId, this.cursor, PAGE);
      for (const entry of entries) {
        if (this.closed) return;
        const place = followsInLog(this.cursor, entry.id);
        if (place === 'seen') continue;
        // The cap or the expiry took the entries between: say so rather than skip them silently.
        if (place === 'jump') deliver({ type: 'token-gap', runId, after: this.cursor });
        this.cursor = entry.id;
        if (entry.event) deliver(entry.event);
      }
      if (entries.length < PAGE) return;
    }
  }
}
