import { isCluster, type RedisConnection } from '../../shared/redis/connect-redis.js';
import type { Keys } from '../../shared/store/keys.js';
import { parseTokenEvent, type TokenEvent } from '../../shared/contracts/token-event.js';

type TokenListener = (event: TokenEvent) => void;

/**
 * Fans the live token channels of many runs out to many listeners over one pub/sub connection: a run's
 * channel is subscribed while it has a listener and unsubscribed when its last one leaves, so two
 * hundred SSE clients of one run cost one subscription, and a closed stream leaves nothing behind
 * (`listenerCount()` says so).
 */
export class TokenHub {
  private readonly listeners = new Map<string, Set<TokenListener>>();
  /** SUBSCRIBEs in flight: a second listener of a channel waits for the first one's confirmation too. */
  private readonly pending = new Map<string, Promise<unknown>>();
  /** What each listener wants called when the connection came back (messages were lost meanwhile). */
  private readonly resumers = new Map<TokenListener, () => void>();
  private subscriber: RedisConnection | undefined;
  private closed = false;

  /** `connect` makes the pub/sub connection (made on the first subscription, closed by `close`). */
  constructor(
    private readonly keys: Keys,
    private readonly connect: () => RedisConnection,
  ) {}

  /**
   * Calls `listener` with each token of `runId` until the returned function is called. Resolves once
   * Redis has confirmed the subscription: tokens published after that are delivered. `onResume` is
   * called when the pub/sub connection dropped and is subscribed again: what was published in between
   * never came (the run's token log has it).
   */
  async subscribe(runId: string, listener: TokenListener, onResume?: () => void): Promise<() => void> {
    if (this.closed) return () => undefined;
    const channel = this.keys.tokenChannel(runId);
    let set = this.listeners.get(channel);
    const first = !set;
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    if (onResume) this.resumers.set(listener, onResume);
    let active = true;
    const unsubscribe = () => {
      if (!active) return;
      active = false;
      this.resumers.delete(listener);
      const current = this.listeners.get(channel);
      current?.delete(listener);
      if (current && current.size === 0) {
        this.listeners.delete(channel);
        if (this.subscriber) this.unsubscribeFrom(this.subscriber, channel).catch(() => undefined);
      }
    };
    let subscribing = this.pending.get(channel);
    if (first) {
      const connection = this.connection();
      subscribing = isCluster(connection) ? connection.ssubscribe(channel) : connection.subscribe(channel);
      this.pending.set(channel, subscribing);
      void subscribing.then(
        () => this.pending.delete(channel),
        () => this.pending.delete(channel),
      );
    }
    try {
      await subscribing;
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /** Listeners still attached, over all runs (zero when every stream has closed). */
  listenerCount(): number {
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }

  /** Channels subscribed right now. */
  channelCount(): number {
    return this.listeners.size;
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.resumers.clear();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  private unsubscribeFrom(subscriber: RedisConnection, channel: string): Promise<unknown> {
    return isCluster(subscriber) ? subscriber.sunsubscribe(channel) : subscriber.unsubscribe(channel);
  }

  /**
   * The pub/sub connection. On one Redis, SUBSCRIBE. On a Cluster, sharded pub/sub (SSUBSCRIBE, the
   * connection made with the 'subscriber' role): a run's tokens go through the master of its channel's
   * slot (its shard's), in order, where a cluster-wide PUBLISH sent through whichever node ioredis
   * picks would reach subscribers out of order (measured: words swapped) and load every node.
   */
  private connection(): RedisConnection {
    if (!this.subscriber) {
      const subscriber = this.connect();
      const deliver = (channel: string, message: string) => {
        const set = this.listeners.get(channel);
        if (!set) return;
        const event = parseTokenEvent(message);
        if (!event) return;
        for (const listener of [...set]) listener(event);
      };
      subscriber.on(isCluster(subscriber) ? 'smessage' : 'message', deliver);
      let connected = subscriber.status === 'ready';
      subscriber.on('ready', () => {
        if (!connected) {
          connected = true;
          return;
        }
        // ioredis sends the SUBSCRIBEs again as it gets ready; a PING answered behind them says they hold.
        void subscriber.ping().then(
          () => {
            for (const resume of [...this.resumers.values()]) resume();
          },
          () => undefined,
        );
      });
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}
