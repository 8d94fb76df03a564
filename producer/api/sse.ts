import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { isTerminal, type RunEvent } from '../../shared/contracts/run-record.js';
import type { RunEventHub } from '../client/run-event-hub.js';
import type { StreamSlots } from './limits/stream-slots.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import type { TokenHub } from '../client/token-hub.js';
import { toApiError } from './errors.js';

interface StreamRunEventsOptions {
  request: FastifyRequest;
  reply: FastifyReply;
  store: RedisRunStore;
  /** The API's multiplexed reader of run events (no Redis connection per stream). */
  events: RunEventHub;
  /** The process's stream limits: no slot for `tenant` → 429 before the stream opens. */
  streams: StreamSlots;
  /** The run's tenant (its streams count against its limit). */
  tenant: string;
  runId: string;
  /** Stream id to resume after (`Last-Event-ID`); '0-0' for every event. */
  after: string;
  /** Live model tokens: sent as `token` / `token-reset` events (no `id`, so Last-Event-ID stays on committed events). @default none */
  tokens?: TokenHub;
  /** Ends the stream (the API is closing). */
  signal: AbortSignal;
  /** A comment line this often keeps proxies from closing an idle stream. @default 15000 */
  heartbeatMs?: number;
  /** How long one wait for new events lasts before the run's status is checked again. @default 5000 */
  blockMs?: number;
}

function frame(event: RunEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A live token: no `id` line, so a reconnecting client's Last-Event-ID still names a committed event. */
function tokenFrame(event: TokenEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Serves a run's events as Server-Sent Events: what the stream holds after `after`, then new events as
 * they come (through the API's RunEventHub: one blocking connection for every stream), ending after
 * `run-end`. A client that connects after the run ended gets every event and the end at once. When the
 * client goes away its follower is closed, so an abandoned stream holds nothing.
 *
 * With `tokens`, the run's live model text is sent too: subscribed before the first read, held back
 * until the committed events so far are out (a late subscriber sees what is committed first, then
 * live text), then written as it comes, between the blocking reads.
 */
export async function streamRunEvents({
  request,
  reply,
  store,
  events: hub,
  streams,
  tenant,
  runId,
  after,
  tokens,
  signal,
  heartbeatMs = 15_000,
  blockMs = 5000,
}: StreamRunEventsOptions): Promise<void> {
  // Before the answer starts: a refusal is still an ordinary 429 in the error shape.
  const release = streams.take(tenant);
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx buffers responses unless told not to.
    'x-accel-buffering': 'no',
  });
  raw.write('retry: 2000\n\n');
  const follower = hub.follow(runId, after);
  let closed = false;
  const onClose = () => {
    closed = true;
    follower.close();
  };
  raw.once('close', onClose);
  signal.addEventListener('abort', onClose, { once: true });
  if (signal.aborted) onClose();
  let lastWrite = Date.now();
  const write = (text: string) => {
    if (closed || raw.writableEnded) return;
    raw.write(text);
    lastWrite = Date.now();
  };
  // Tokens that arrive while the committed backlog is still being written wait here.
  let held: TokenEvent[] | null = [];
  let unsubscribe: (() => void) | undefined;
  try {
    if (tokens && !closed) {
      unsubscribe = await tokens.subscribe(runId, (event) => {
        if (held) held.push(event);
        else write(tokenFrame(event));
      });
      if (closed) return;
    }
    for (;;) {
      if (closed) return;
      // Pages of the backlog at once, an empty answer once caught up, then live events (or [] after blockMs).
      let events = await follower.next(blockMs);
      if (closed) return;
      if (events.length === 0 && held) {
        // Caught up with what is committed: live text from here on.
        for (const event of held) write(tokenFrame(event));
        held = null;
      }
      if (events.length === 0) {
        const meta = await store.reads.get(runId);
        if (!meta) return; // purged or expired meanwhile
        if (isTerminal(meta.status)) {
          // The status and run-end are written by one script: once finished, the stream is complete.
          while ((events = await follower.catchUp()).length > 0) for (const event of events) write(frame(event));
          return;
        }
        if (Date.now() - lastWrite >= heartbeatMs) write(': keep-alive\n\n');
        continue;
      }
      for (const event of events) {
        write(frame(event));
        if (event.type === 'run-end') return;
      }
    }
  } catch (error) {
    if (!closed) {
      const apiError = toApiError(error, request);
      if (apiError.statusCode >= 500)
        request.log.warn({ runId, err: (error as Error).message }, 'event stream ended by an error');
      write(`event: error\ndata: ${JSON.stringify(apiError.toBody())}\n\n`);
    }
  } finally {
    unsubscribe?.();
    raw.off('close', onClose);
    signal.removeEventListener('abort', onClose);
    follower.close();
    release();
    if (!raw.writableEnded) raw.end();
    // Closing: let go of the connection too, or the server's close waits out its keep-alive.
    if (signal.aborted) {
      const releaseSocket = () => request.raw.socket?.end();
      if (raw.writableFinished) releaseSocket();
      else raw.once('finish', releaseSocket);
    }
  }
}
