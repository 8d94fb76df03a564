import type { RedisConnection } from '../../shared/adapters/redis/connect-redis.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { isTerminal, type RunEvent } from '../../shared/contracts/run-record.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import type { TokenHub } from './token-hub.js';

/** What following a run yields: its committed events (with ids) and its live tokens (without). */
export type RunStreamEvent = RunEvent | TokenEvent;

export interface FollowRunOptions {
  store: RedisRunStore;
  /** A connection of its own for the blocking reads; disconnected when the stream ends. */
  reader: RedisConnection;
  tokens: TokenHub;
  runId: string;
  /** Resume after this committed event id. @default '0-0' (from the start) */
  after?: string;
  /** How long one blocking read waits. @default 1000 */
  blockMs?: number;
  /** Called when the stream ends, to let go of `reader`. @default reader.disconnect() */
  release?: () => void;
  /** Ends the stream early (the consumer went away). @default none */
  signal?: AbortSignal;
}

/**
 * A run's committed events and live model tokens as one stream, ending after `run-end`: the committed
 * backlog first (tokens that arrive meanwhile are held), then both as they come. Tokens are pushed by
 * the hub while a blocking read waits, so they reach the consumer without waiting out the read.
 */
export async function* followRun({
  store,
  reader,
  tokens,
  runId,
  after = '0-0',
  blockMs = 1000,
  release = () => reader.disconnect(),
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
  const readCommitted = async () => {
    let cursor = after;
    try {
      while (!done) {
        let events = await store.events(runId, { after: cursor, connection: reader });
        if (events.length === 0) {
          if (held) {
            for (const event of held) push(event);
            held = null;
          }
          const record = await store.record(runId);
          if (!record) return;
          if (isTerminal(record.status)) {
            for (const event of await store.events(runId, { after: cursor, connection: reader })) push(event);
            return;
          }
          events = await store.events(runId, { after: cursor, blockMs, connection: reader });
        }
        for (const event of events) {
          cursor = event.id;
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
    // A blocked read ends with its connection.
    reader.disconnect();
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
    release();
    await reading;
  }
}
