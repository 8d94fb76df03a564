/** One Server-Sent Event as a client sees it. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
}

/** Splits an event stream into frames (comments and `retry:` lines dropped). */
export function parseSseFrames(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split('\n\n')) {
    const frame: SseFrame = {};
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id' || field === 'event' || field === 'data') frame[field] = value;
    }
    if (frame.event !== undefined || frame.data !== undefined) frames.push(frame);
  }
  return frames;
}

/**
 * Reads an SSE response body until `stop(frames)` says so or the stream ends; → the frames read. The
 * caller aborts the request afterwards if the stream is still open.
 */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  stop: (frames: SseFrame[]) => boolean = () => false,
): Promise<SseFrame[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return parseSseFrames(text);
      text += decoder.decode(value, { stream: true });
      const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
      const frames = parseSseFrames(complete);
      if (stop(frames)) return frames;
    }
  } finally {
    reader.releaseLock();
  }
}
