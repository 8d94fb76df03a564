import type { FastifyReply, FastifyRequest } from 'fastify';
import { followRun } from '../client/follow-run.js';
import type { ApiContext } from './api-context.js';
import { toApiError } from './errors.js';
import { isTokenEvent } from '../../shared/contracts/token-event.js';

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
 */
export async function streamChatAnswer({
  request,
  reply,
  context,
  runId,
  answerOf,
  release,
}: StreamChatAnswerOptions): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const send = (event: string, data: unknown) => {
    if (!raw.writableEnded && !raw.destroyed) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
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
      signal: gone.signal,
    });
    for await (const event of stream) {
      if (isTokenEvent(event)) send(event.type, event);
      else if (event.type === 'step-end') {
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
