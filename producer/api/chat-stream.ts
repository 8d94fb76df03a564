import type { FastifyReply, FastifyRequest } from 'fastify';
import { followRun } from '../client/follow-run.js';
import type { ApiContext } from './api-context.js';
import { toApiError } from './errors.js';
import { isTokenEvent } from '../../shared/contracts/token-event.js';
import { formatStreamCursor, type StreamCursor } from '../../shared/contracts/stream-cursor.js';

interface StreamChatAnswerOptions {
  request: FastifyRequest;
  reply: FastifyReply;
  context: ApiContext;
  runId: string;
  /** Turns a finished run into the chat contract (or throws the ApiError the JSON route would). */
  answerOf: (runId: string) => Promise<unknown>;
  /** Gives back the stream's slot (StreamSlots) once the stream has ended. */
  release: () => void;
}

/**
 * `POST /v1/agent/chat` with `"stream": true`: Server-Sent Events of the rag-agent run as it works —
 * `run` (its id, first), `reasoning` (each new reasoning step, as its step commits), `token` /
 * `token-reset` (the model's text live; a reset drops that step's partial text; `token-gap` if the
 * stream fell behind the run's token log), then `answer` (the
 * same JSON as the non-streamed answer, with sources) or `error` ({error:{code,message,details},status}: the non-streamed answer's body and status), and the end.
 * Every frame has an id that `GET /v1/runs/:id/events` resumes from (`Last-Event-ID`).
 */
export async function streamChatAnswer({
  request,
  reply,
  context,
  runId,
  answerOf,
  release,
}: StreamChatAnswerOptions): Promise<void> {
  // Each frame's id is the run events stream's cursor after it (`<event id>_<token id>`), so a client that
  // lost this stream resumes with `GET /v1/runs/:id/events` and that `Last-Event-ID`, each token once. The
  // token half starts where the run's token log stands at this first watch (tokens are kept from then on).
  let cursor: StreamCursor;
  try {
    cursor = { event: '0-0', token: (await context.store.tokenLog.watch(runId)).lastId };
  } catch (error) {
    release();
    throw error;
  }
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const send = (event: string, data: unknown, withId = true) => {
    const id = withId ? `id: ${formatStreamCursor(cursor)}\n` : '';
    if (!raw.writableEnded && !raw.destroyed) raw.write(`${id}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const gone = new AbortController();
  const onClose = () => gone.abort();
  raw.once('close', onClose);
  context.closing.addEventListener('abort', onClose, { once: true });
  send('run', { run_id: runId });
  let reasoningSent = 0;
  try {
    const stream = followRun({
      store: context.store,
      events: context.events,
      tokens: context.tokens,
      runId,
      after: formatStreamCursor(cursor),
      signal: gone.signal,
    });
    for await (const event of stream) {
      if (isTokenEvent(event)) {
        // A token the log did not keep has no id: its frame has none either (as on the events stream).
        if (event.type !== 'token-gap' && event.id !== undefined) cursor.token = event.id;
        send(event.type, event, event.type === 'token-gap' || event.id !== undefined);
        continue;
      }
      cursor.event = event.id;
      if (event.type === 'step-end') {
        const state = await context.store.reads.state(runId);
        const reasoning = Array.isArray(state.reasoning) ? (state.reasoning as unknown[]).map(String) : [];
        for (const step of reasoning.slice(reasoningSent)) send('reasoning', { step });
        reasoningSent = Math.max(reasoningSent, reasoning.length);
      } else if (event.type === 'run-end') break;
    }
    if (!gone.signal.aborted) send('answer', await answerOf(runId));
  } catch (error) {
    // The same body the JSON answer would have, and the status it would have had.
    if (!gone.signal.aborted) {
      const failure = toApiError(error, request);
      send('error', { ...failure.toBody(), status: failure.statusCode });
    }
  } finally {
    raw.off('close', onClose);
    context.closing.removeEventListener('abort', onClose);
    release();
    if (!raw.writableEnded) raw.end();
  }
}
