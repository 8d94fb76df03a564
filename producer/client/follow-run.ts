import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { isTerminal, type RunEvent } from '../../shared/contracts/run-record.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import type { RunEventFollower, RunEventHub } from './run-event-hub.js';
import type { TokenHub } from './token-hub.js';

/** What following a run yields: its committed events (with ids) and its live tokens (without). */
export type RunStreamEvent = RunEvent | TokenEvent;

interface FollowRunOptions {
  store: RedisRunStore;
  /**
   * Where committed events come from: the API's multiplexed hub, or a connection of its own for blocking
   * reads (disconnected by `release` when the stream ends). One of the two.
   */
  events: RunEventHub | { reader: RedisConnection };
  tokens: TokenHub;
  runId: string;
  /** Resume after this committed event id. @default '0-0' (from the start) */
  after?: string;
  /** How long one wait for new events lasts before the run's status is checked again. @default 1000 */
  blockMs?: number;
  /** Called when the stream ends, to let go of a reader of its own. @default reader.disconnect() */
  release?: () => void;
  /** Ends the stream early (the consumer went away). @default none */
  signal?: AbortSignal;
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
 * the hub while a read waits, so they reach the consumer without waiting out the read.
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
}: FollowRunOptions): AsyncGenerator<RunStreamEvent> {
  const queue: RunStreamEvent[] = [];
  let wake: (() => void) | undefined;
  let held: TokenEvent[] | null = [];
  let done = false;
  let failure: unknown;
  const push = (event: RunStreamEvent) => {
    queue.push(event);
    wake?.();
  };
  const unsubscribe = await tokens.subscribe(runId, (event) => (held ? held.push(event) : push(event)));
  const follower =
    'reader' in source ? ownReaderFollower(store, source.reader, runId, after) : source.follow(runId, after);
  const readCommitted = async () => {
    try {
      while (!done) {
        const events = await follower.next(blockMs);
        if (done) return;
        if (events.length === 0) {
          if (held) {
            for (const event of held) push(event);
            held = null;
          }
          const record = await store.reads.record(runId);
          if (!record) return;
          if (isTerminal(record.status)) {
            // The status and run-end are written by one script: once finished, what is committed is complete.
            for (let rest = await follower.catchUp(); rest.length > 0; rest = await follower.catchUp())
              for (const event of rest) push(event);
            return;
          }
          continue;
        }
        for (const event of events) {
          push(event);
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
    unsubscribe();
    follower.close();
    release();
    await reading;
  }
}
