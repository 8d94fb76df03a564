import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { isTerminal, type RunEvent } from '../../shared/contracts/run-record.js';
import { parseStreamCursor } from '../../shared/contracts/stream-cursor.js';
import type { RunEventFollower, RunEventHub } from './run-event-hub.js';
import type { TokenHub } from './token-hub.js';
import { TokenFeed, type TokenFeedEvent } from './token-feed.js';

/**
 * What following a run yields: its committed events and its live tokens (`token`, `token-reset`, and
 * `token-gap` when tokens it missed were no longer kept), each with the id of its own stream.
 */
export type RunStreamEvent = RunEvent | TokenFeedEvent;

interface FollowRunOptions {
  store: RedisRunStore;
  /**
   * Where committed events come from: the API's multiplexed hub, or a connection of its own for blocking
   * reads (disconnected by `release` when the stream ends). One of the two.
   */
  events: RunEventHub | { reader: RedisConnection };
  tokens: TokenHub;
  runId: string;
  /**
   * Resume after this committed event id, or after a stream cursor (`<event id>_<token id>`: that event
   * and that token; the SSE streams' `Last-Event-ID`). @default '0-0' (every event; tokens from now on)
   */
  after?: string;
  /** How long one wait for new events lasts before the run's status is checked again. @default 1000 */
  blockMs?: number;
  /** Called when the stream ends, to let go of a reader of its own. @default reader.disconnect() */
  release?: () => void;
  /** Ends the stream early (the consumer went away). @default none */
  signal?: AbortSignal;
  /** Waits until the store's connection is up (a producer's has no offline queue). @default none */
  ready?: () => Promise<void>;
}

/**
 * Committed events read with blocking XREADs on a connection of its own (the library's and the CLI's
 * streams; the API multiplexes through a RunEventHub instead). Same answers as a hub's follower.
 */
function ownReaderFollower(
  store: RedisRunStore,
  reader: RedisConnection,
  runId: string,
  after: string,
): RunEventFollower {
  let seen = after;
  let caughtUp = false;
  const read = async (blockMs?: number) => {
    const events = await store.eventLog.events(runId, {
      after: seen,
      connection: reader,
      ...(blockMs === undefined ? {} : { blockMs }),
    });
    if (events.length > 0) seen = events.at(-1)!.id;
    return events;
  };
  return {
    async next(waitMs) {
      const events = await read(caughtUp && waitMs > 0 ? waitMs : undefined);
      if (events.length === 0) caughtUp = true;
      return events;
    },
    catchUp: () => read(),
    close: () => undefined,
  };
}

/**
 * A run's committed events and live model tokens as one stream, ending after `run-end`: the committed
 * backlog first (tokens that arrive meanwhile are held), then both as they come. Tokens are pushed by
 * the hub while a read waits, so they reach the consumer without waiting out the read; a dropped pub/sub
 * connection costs none of them (TokenFeed reads what it missed from the run's token log), and the
 * tokens kept before `run-end` come before it.
 */
export async function* followRun({
  store,
  events: source,
  tokens,
  runId,
  after = '0-0',
  blockMs = 1000,
  release = 'reader' in source ? () => source.reader.disconnect() : () => undefined,
  signal,
  ready,
}: FollowRunOptions): AsyncGenerator<RunStreamEvent> {
  const queue: RunStreamEvent[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: unknown;
  const push = (event: RunStreamEvent) => {
    queue.push(event);
    wake?.();
  };
  const cursor = parseStreamCursor(after) ?? { event: after, token: null };
  let feed: TokenFeed;
  try {
    await ready?.();
    feed = await TokenFeed.open({ hub: tokens, log: store.tokenLog, runId, after: cursor.token, deliver: push });
  } catch (error) {
    release();
    throw error;
  }
  const follower =
    'reader' in source
      ? ownReaderFollower(store, source.reader, runId, cursor.event)
      : source.follow(runId, cursor.event);
  const pushCommitted = async (event: RunEvent) => {
    if (event.type === 'run-end') await feed.catchUp();
    push(event);
  };
  let started = false;
  const readCommitted = async () => {
    try {
      while (!done) {
        const events = await follower.next(blockMs);
        if (done) return;
        if (events.length === 0) {
          if (!started) {
            started = true;
            await feed.start();
          }
          const record = await store.reads.record(runId);
          if (!record) return;
          if (isTerminal(record.status)) {
            // The status and run-end are written by one script: once finished, what is committed is complete.
            for (let rest = await follower.catchUp(); rest.length > 0; rest = await follower.catchUp())
              for (const event of rest) await pushCommitted(event);
            return;
          }
          await feed.refresh();
          continue;
        }
        for (const event of events) {
          await pushCommitted(event);
          if (event.type === 'run-end') return;
        }
      }
    } catch (error) {
      if (!done) failure = error;
    } finally {
      done = true;
      wake?.();
    }
  };
  const stop = () => {
    done = true;
    // A waiting read ends with its follower (the hub's) or its connection (one of its own).
    follower.close();
    release();
    wake?.();
  };
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) stop();
  const reading = readCommitted();
  try {
    for (;;) {
      const event = queue.shift();
      if (event) {
        yield event;
        if (event.type === 'run-end') return;
        continue;
      }
      if (done) {
        if (failure && !signal?.aborted) throw failure;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    done = true;
    signal?.removeEventListener('abort', stop);
    feed.close();
    follower.close();
    release();
    await reading;
  }
}
