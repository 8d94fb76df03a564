import type { TokenEvent } from '../../shared/contracts/token-event.js';
import { readSse, type SseFrame } from './api-sse.js';

export const tokensOf = (frames: SseFrame[]): TokenEvent[] =>
  frames.filter((frame) => frame.event === 'token').map((frame) => JSON.parse(frame.data!) as TokenEvent);

/** The position a client reconnects with: the id of the last frame it got that had one. */
export const lastEventId = (frames: SseFrame[]): string | undefined =>
  frames.filter((frame) => frame.id !== undefined).at(-1)?.id;

/**
 * What a client that follows a one-call run's stream ends with: the text of the step's last attempt (the
 * tokens after the last `token-reset`, as the streaming guide tells clients to do), whether those tokens
 * came whole (indexes 0…n-1, no token id twice), how many attempts it saw begin, and whether it was told
 * of a gap (`token-gap`: drop the partial text and read the committed message).
 */
export function finalAttempt(frames: SseFrame[]): { text: string; whole: boolean; resets: number; gap: boolean } {
  const resets = frames.flatMap((frame, index) => (frame.event === 'token-reset' ? [index] : []));
  const tokens = tokensOf(frames.slice((resets.at(-1) ?? -1) + 1));
  const ids = tokensOf(frames).map((token) => token.id);
  return {
    text: tokens.map((token) => token.text).join(''),
    whole: tokens.every((token, index) => token.index === index) && new Set(ids).size === ids.length,
    resets: resets.length,
    gap: frames.some((frame) => frame.event === 'token-gap'),
  };
}

interface FollowOptions {
  /** The API's base URL, the run and the headers (an API key) of each request. */
  url: string;
  runId: () => string;
  headers: Record<string, string>;
  /** Drop the connection once this many tokens came, and reconnect only after `resumeAfter`. */
  dropAt?: number;
  resumeAfter?: Promise<void>;
}

/**
 * Follows a run's events stream over SSE to its `run-end`, reconnecting with the last event id whenever
 * the stream ends early (a dropped connection, an API that lost Redis); → every frame and the reconnects.
 */
export async function followToEnd(options: FollowOptions): Promise<{ frames: SseFrame[]; reconnects: number }> {
  const frames: SseFrame[] = [];
  let reconnects = 0;
  let dropped = options.dropAt === undefined;
  for (;;) {
    const closing = new AbortController();
    const last = lastEventId(frames);
    const got = await fetch(`${options.url}/v1/runs/${options.runId()}/events`, {
      headers: { ...options.headers, ...(last ? { 'last-event-id': last } : {}) },
      signal: closing.signal,
    })
      .then((response) =>
        readSse(
          response.body!,
          (read) =>
            read.some((frame) => frame.event === 'run-end') ||
            (!dropped && tokensOf([...frames, ...read]).length >= options.dropAt!),
        ),
      )
      .catch(() => [] as SseFrame[]);
    closing.abort();
    frames.push(...got);
    if (got.some((frame) => frame.event === 'run-end')) return { frames, reconnects };
    if (!dropped) {
      dropped = true;
      await options.resumeAfter;
    } else if (got.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    reconnects += 1;
  }
}
