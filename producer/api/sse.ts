import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { isTerminal, type RunEvent } from '../../shared/contracts/run-record.js';
import type { RunEventHub } from '../client/run-event-hub.js';
import type { StreamSlots } from './limits/stream-slots.js';
import { formatStreamCursor, type StreamCursor } from '../../shared/contracts/stream-cursor.js';
import type { TokenHub } from '../client/token-hub.js';
import { TokenFeed, type TokenFeedEvent } from '../client/token-feed.js';
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
  /** Where to resume (`Last-Event-ID`): after this committed event and this token; `{event: '0-0', token: null}` for every event. */
  after: StreamCursor;
  /** Live model tokens: sent as `token` / `token-reset` / `token-gap` events. @default none */
  tokens?: TokenHub;
  /** Ends the stream (the API is closing). */
  signal: AbortSignal;
  /** A comment line this often keeps proxies from closing an idle stream. @default 15000 */
  heartbeatMs?: number;
  /** How long one wait for new events lasts before the run's status is checked again. @default 5000 */
  blockMs?: number;
}

/** An event with the stream's cursor after it as its id (none for a token the run's log did not keep). */
function frame(event: RunEvent | TokenFeedEvent, id: string | null): string {
  return `${id === null ? '' : `id: ${id}\n`}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Serves a run's events as Server-Sent Events: what the stream holds after `after`, then new events as
 * they come (through the API's RunEventHub: one blocking connection for every stream), ending after
 * `run-end`. A client that connects after the run ended gets every event and the end at once. When the
 * client goes away its follower is closed, so an abandoned stream holds nothing.
 *
 * With `tokens`, the run's live model text is sent too (TokenFeed): followed before the first read, held
 * back until the committed events so far are out (a late subscriber sees what is committed first), then
 * the tokens the run's log kept after the client's cursor, then live text as it comes, between the
 * blocking reads. Every frame's id is the stream's cursor after it — the last committed event and the
 * last token sent (`<event id>_<token id>`) — so one `Last-Event-ID` resumes both, each token once.
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
  const follower = hub.follow(runId, after.event);
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
  let lastEvent = after.event;
  let feed: TokenFeed | undefined;
  const cursor = () => formatStreamCursor({ event: lastEvent, token: feed ? feed.position : after.token });
  const writeEvent = async (event: RunEvent) => {
    // The tokens kept before the end go out before it.
    if (event.type === 'run-end') await feed?.catchUp();
    lastEvent = event.id;
    write(frame(event, cursor()));
  };
  let started = false;
  try {
    if (tokens && !closed) {
      feed = await TokenFeed.open({
        hub: tokens,
        log: store.tokenLog,
        runId,
        after: after.token,
        deliver: (event) => write(frame(event, event.type !== 'token-gap' && event.id === undefined ? null : cursor())),
      });
      if (closed) return;
    }
    for (;;) {
      if (closed) return;
      // Pages of the backlog at once, an empty answer once caught up, then live events (or [] after blockMs).
      let events = await follower.next(blockMs);
      if (closed) return;
      if (events.length === 0 && !started) {
        // Caught up with what is committed: the kept tokens the client missed, then live text.
        started = true;
        await feed?.start();
      }
      if (events.length === 0) {
        const meta = await store.reads.get(runId);
        if (!meta) return; // purged or expired meanwhile
        if (isTerminal(meta.status)) {
          // The status and run-end are written by one script: once finished, the stream is complete.
          while ((events = await follower.catchUp()).length > 0) for (const event of events) await writeEvent(event);
          return;
        }
        await feed?.refresh();
        if (Date.now() - lastWrite >= heartbeatMs) write(': keep-alive\n\n');
        continue;
      }
      for (const event of events) {
        await writeEvent(event);
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
    feed?.close();
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
